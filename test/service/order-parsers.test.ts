import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/common/errors.js';
import {
  parseAtmTemplate,
  parseInstrument,
  parseOrderId,
  parsePrice,
} from '../../src/service/order.js';

function message(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as Error).message;
  }
  throw new Error('expected a rejection');
}

describe('single-field parsers share the order rules', () => {
  it('instrument: normalized, and the same messages as an order', () => {
    expect(parseInstrument('es 09-25')).toBe('ES 09-25');
    expect(parseInstrument('es mar26')).toBe('ES 03-26');
    expect(message(() => parseInstrument('ES 13-25'))).toBe("Invalid request: instrument: month must be 01-12, got '13' in 'ES 13-25'");
    expect(message(() => parseInstrument(undefined))).toBe('Invalid request: instrument: is required');
  });

  it('price: positive, finite, bounded', () => {
    expect(parsePrice(4500.25)).toBe(4500.25);
    for (const bad of [0, -1, Infinity, Number.NaN, 2e9, '1']) expect(() => parsePrice(bad)).toThrow(ValidationError);
  });

  it('order id: a non-empty name without control characters', () => {
    expect(parseOrderId('2ea6bcace215a4d965afa9907f5c88fd')).toBe('2ea6bcace215a4d965afa9907f5c88fd');
    expect(message(() => parseOrderId(''))).toBe('Invalid request: orderId: must not be empty');
  });
});

describe('ATM template', () => {
  const good = { name: 'Scalp', stopLossTicks: 8, profitTargetTicks: 16, tickSize: 0.25 };

  it('accepts whole ticks and a positive tick size', () => {
    expect(parseAtmTemplate(good)).toEqual(good);
  });

  it('names every bad field', () => {
    expect(message(() => parseAtmTemplate({ name: ' x', stopLossTicks: 0, profitTargetTicks: 2.5, tickSize: -1 }))).toBe(
      'Invalid request: name: must not start or end with spaces; stopLossTicks: must be at least 1 tick, got 0; ' +
        'profitTargetTicks: must be a whole number of ticks, got 2.5; tickSize: must be a positive number, got -1',
    );
    expect(message(() => parseAtmTemplate({ ...good, extra: 1 }))).toBe('Invalid request: extra: is not a known field');
  });
});
