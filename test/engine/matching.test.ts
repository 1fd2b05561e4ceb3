import { describe, expect, it } from 'vitest';
import { limitFillPrice, matchOrder, stopIsTouched, stopTouchPrice, type Matchable } from '../../src/engine/matching.js';

const limit = (action: 'BUY' | 'SELL', limitPrice: number): Matchable => ({
  action, orderType: 'LIMIT', limitPrice, stopPrice: null, triggered: false,
});
const stop = (action: 'BUY' | 'SELL', stopPrice: number): Matchable => ({
  action, orderType: 'STOPMARKET', limitPrice: null, stopPrice, triggered: false,
});
const stopLimit = (action: 'BUY' | 'SELL', stopPrice: number, limitPrice: number, triggered = false): Matchable => ({
  action, orderType: 'STOPLIMIT', limitPrice, stopPrice, triggered,
});

describe('fill rules on a move from one price to the next', () => {
  it('BUY LIMIT fills when the price reaches the limit or below, at the limit', () => {
    expect(matchOrder(limit('BUY', 100), 105, 101)).toBeNull();
    expect(matchOrder(limit('BUY', 100), 105, 100)).toEqual({ kind: 'fill', price: 100 });
    expect(matchOrder(limit('BUY', 100), 105, 95)).toEqual({ kind: 'fill', price: 100 });
  });

  it('SELL LIMIT fills when the price reaches the limit or above, at the limit', () => {
    expect(matchOrder(limit('SELL', 100), 95, 99.75)).toBeNull();
    expect(matchOrder(limit('SELL', 100), 95, 100)).toEqual({ kind: 'fill', price: 100 });
    expect(matchOrder(limit('SELL', 100), 95, 110)).toEqual({ kind: 'fill', price: 100 });
  });

  it('a LIMIT already marketable where the move starts fills there: at or better than its limit', () => {
    expect(matchOrder(limit('BUY', 100), 98, 98)).toEqual({ kind: 'fill', price: 98 });
    expect(matchOrder(limit('SELL', 100), 103, 103)).toEqual({ kind: 'fill', price: 103 });
    expect(matchOrder(limit('BUY', 100), 100, 100)).toEqual({ kind: 'fill', price: 100 });
  });

  it('BUY STOPMARKET triggers at the stop or above and fills at the stop price', () => {
    expect(matchOrder(stop('BUY', 100), 95, 99.75)).toBeNull();
    expect(matchOrder(stop('BUY', 100), 95, 100)).toEqual({ kind: 'fill', price: 100 });
    expect(matchOrder(stop('BUY', 100), 95, 120)).toEqual({ kind: 'fill', price: 100 });
  });

  it('SELL STOPMARKET triggers at the stop or below and fills at the stop price', () => {
    expect(matchOrder(stop('SELL', 100), 105, 100.25)).toBeNull();
    expect(matchOrder(stop('SELL', 100), 105, 100)).toEqual({ kind: 'fill', price: 100 });
    expect(matchOrder(stop('SELL', 100), 105, 90)).toEqual({ kind: 'fill', price: 100 });
  });

  it('a move away from an order never fills it', () => {
    expect(matchOrder(limit('BUY', 100), 105, 110)).toBeNull();
    expect(matchOrder(stop('SELL', 100), 105, 110)).toBeNull();
    expect(matchOrder(stop('BUY', 100), 95, 90)).toBeNull();
  });

  it('STOPLIMIT with a limit marketable at the stop fills at the stop price', () => {
    expect(matchOrder(stopLimit('BUY', 100, 101), 95, 105)).toEqual({ kind: 'fill', price: 100 });
    expect(matchOrder(stopLimit('SELL', 100, 99), 105, 90)).toEqual({ kind: 'fill', price: 100 });
  });

  it('STOPLIMIT with a limit beyond the stop triggers, then rests as a limit', () => {
    expect(matchOrder(stopLimit('BUY', 100, 99), 95, 105)).toEqual({ kind: 'trigger', price: 100 });
    expect(matchOrder(stopLimit('SELL', 100, 101), 105, 90)).toEqual({ kind: 'trigger', price: 100 });
    expect(matchOrder(stopLimit('BUY', 100, 99), 95, 99.5)).toBeNull();
  });

  it('a triggered STOPLIMIT follows the limit rule', () => {
    expect(matchOrder(stopLimit('BUY', 100, 99, true), 105, 99.5)).toBeNull();
    expect(matchOrder(stopLimit('BUY', 100, 99, true), 105, 98)).toEqual({ kind: 'fill', price: 99 });
    expect(matchOrder(stopLimit('SELL', 100, 101, true), 90, 102)).toEqual({ kind: 'fill', price: 101 });
  });

  it('helpers agree with the rules', () => {
    expect(limitFillPrice('BUY', 100, 101, 101)).toBeNull();
    expect(stopTouchPrice('SELL', 100, 100, 100)).toBe(100);
    expect(stopIsTouched('BUY', 100, 100)).toBe(true);
    expect(stopIsTouched('BUY', 100, 99.75)).toBe(false);
    expect(stopIsTouched('SELL', 100, 100.25)).toBe(false);
    expect(stopIsTouched('SELL', 100, 99)).toBe(true);
  });
});
