/**
 * parseArgs (src/service/operations.ts) keeps two schemas per operation, built on first use: the
 * client's, which refuses a field it does not know (a misspelt field in a batch line), and the
 * server's, which ignores it (service-reference.md §1.3). Asked in either order and again, each
 * mode keeps its own answer.
 */
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/common/errors.js';
import { parseArgs } from '../../src/service/operations.js';

const WITH_EXTRA = { account: 'Sim101', instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY', note: 'x' };
const POSITION_WITH_EXTRA = { account: 'Sim101', instrument: 'ES 09-25', note: 'x' };

const refusal = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as Error).message;
  }
  throw new Error('not refused');
};

describe('parseArgs in client and server mode', () => {
  it('an unknown field: the client refuses it, the server drops it, asked in either order and again', () => {
    for (let round = 0; round < 2; round++) {
      expect(refusal(() => parseArgs('PlaceOrder', WITH_EXTRA, 'client'))).toBe('Invalid request: note: is not a known field');
      expect(parseArgs('PlaceOrder', WITH_EXTRA, 'server')).toStrictEqual({
        account: 'Sim101',
        instrument: 'ES 09-25',
        action: 'BUY',
        quantity: 1,
        orderType: 'MARKET',
        timeInForce: 'DAY',
      });
      expect(parseArgs('GetPosition', POSITION_WITH_EXTRA, 'server')).toStrictEqual({ account: 'Sim101', instrument: 'ES 09-25' });
      expect(refusal(() => parseArgs('GetPosition', POSITION_WITH_EXTRA, 'client'))).toBe('Invalid request: note: is not a known field');
    }
  });
});
