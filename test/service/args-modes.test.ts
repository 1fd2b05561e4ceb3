/**
 * parseArgs (src/service/operations.ts) keeps two schemas per operation, built on first use: the
 * client's, which refuses a field it does not know (a misspelt field in a batch line), and the
 * server's, which ignores it (service-reference.md §1.3). Asked in either order and again, each
 * mode keeps its own answer.
 */
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/common/errors.js';
import { parseArgs } from '../../src/service/operations.js';

const MARKET = { account: 'Sim101', instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' };
const POSITION = { account: 'Sim101', instrument: 'ES 09-25' };
const UNKNOWN = /^Invalid request: note: is not a known field$/;

describe('parseArgs in client and server mode', () => {
  it('an unknown field: the client refuses it, the server drops it, asked in either order and again', () => {
    for (let round = 0; round < 2; round++) {
      expect(() => parseArgs('PlaceOrder', { ...MARKET, note: 'x' }, 'client')).toThrow(ValidationError);
      expect(() => parseArgs('PlaceOrder', { ...MARKET, note: 'x' }, 'client')).toThrow(UNKNOWN);
      expect(parseArgs('PlaceOrder', { ...MARKET, note: 'x' }, 'server')).toStrictEqual(MARKET);
      expect(parseArgs('GetPosition', { ...POSITION, note: 'x' }, 'server')).toStrictEqual(POSITION);
      expect(() => parseArgs('GetPosition', { ...POSITION, note: 'x' }, 'client')).toThrow(UNKNOWN);
    }
  });
});
