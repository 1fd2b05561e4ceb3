/**
 * What a client reads, against the reference's own examples: each is accepted with only the
 * fields it shows, a side is never read from a sign, and failures are told apart by their body.
 */
import { describe, expect, it } from 'vitest';
import { failureOf, parseReply, readSchemas } from '../../src/service/shapes.js';

// §3.10 (Q1), as documented: no `tag`, no `success` needed.
const CLOSED = {
  type: 'NinjaTrader.Cbi.Position', account: 'Sim101', instrument: 'ES 12-25', instrumentType: 'Future', marketPosition: 'Long',
  quantity: 4, averagePrice: 5779.8125, marketPrice: 5797.0, unrealizedProfitLoss: 3437.5,
};

describe('reading replies', () => {
  it('reads a documented Position; a short is Short with an unsigned size', () => {
    expect(parseReply(readSchemas.closedPositions(), { closedPositions: [CLOSED], success: true })).toEqual({
      ok: true,
      value: { closedPositions: [CLOSED], success: true },
    });
    const short = { ...CLOSED, marketPosition: 'Short', quantity: 2 };
    expect(parseReply(readSchemas.position(), short)).toMatchObject({ ok: true, value: { marketPosition: 'Short', quantity: 2 } });
    expect(parseReply(readSchemas.position(), { ...CLOSED, quantity: -2 }).ok).toBe(false);
    expect(parseReply(readSchemas.position(), { ...CLOSED, marketPosition: undefined }).ok).toBe(false);
  });

  it('reads an Order with only an id; orderId falls back to id; a field of the wrong type is dropped, not fatal', () => {
    expect(parseReply(readSchemas.order(), { id: 'abc', orderState: 'Working' })).toEqual({ ok: true, value: { id: 'abc', orderId: 'abc', orderState: 'Working' } });
    expect(parseReply(readSchemas.order(), { orderId: 'abc', quantity: 'two' })).toEqual({ ok: true, value: { orderId: 'abc' } });
    expect(parseReply(readSchemas.order(), { orderState: 'Working' }).ok).toBe(false);
    expect(parseReply(readSchemas.order(), { orderId: '\u001b[2J' }).ok).toBe(false);
  });

  it('reads lists bare or wrapped, and bodies flat or inside {success, data}', () => {
    expect(parseReply(readSchemas.positions(), [CLOSED])).toEqual({ ok: true, value: { positions: [CLOSED], count: 1 } });
    expect(parseReply(readSchemas.positions(), { positions: [], count: 0, success: true }).ok).toBe(true);
    expect(parseReply(readSchemas.orderId(), { success: true, data: { orderId: 'cb1fc8d4e1a84d29ae38fea964aaac8c' } })).toMatchObject({
      ok: true,
      value: { orderId: 'cb1fc8d4e1a84d29ae38fea964aaac8c' },
    });
    expect(parseReply(readSchemas.orderStatus(), { status: 'Filled', success: true })).toMatchObject({ ok: true, value: { status: 'Filled' } });
  });
});

describe('failures', () => {
  it('an error string or success:false is a failure; anything else is not', () => {
    expect(failureOf({ error: 'Rate limit exceeded' })).toEqual({ error: 'Rate limit exceeded' });
    expect(failureOf({ success: false, error: 'invalid_account', detail: 'Account Sim999 not found' })).toMatchObject({ error: 'invalid_account' });
    expect(failureOf({ success: false })).toEqual({ success: false, error: 'the service reported a failure' });
    expect(failureOf({ orderId: 'x', success: true, warning: 'No positions to flatten' })).toBeUndefined();
    expect(failureOf([{ error: 'x' }])).toBeUndefined();
    expect(failureOf(null)).toBeUndefined();
  });
});
