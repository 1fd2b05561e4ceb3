/** The execution history's file: executions once by id, the stretches seen merged, what a report reads back. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { executionFill, historyService, openHistory, type History } from '../../src/report/history.js';

let dir: string;
let history: History;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trade-history-'));
  history = openHistory(join(dir, 'executions.db'));
});
afterEach(() => {
  history.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The reference's documented Execution (§4.5), with its epoch made to match its time's day. */
const documented = {
  id: '550837ff9e784c2895ef6dab22d06be0', type: 'NinjaTrader.Cbi.Execution', time: '2025-09-26T18:09:38.3736787', epoch: 1758928178373, name: 'Exit',
  orderId: 'd99b2043460849ddae409d1b15cb92ff', account: 'Sim101', serverName: 'DESKTOP-200Q1V3', instrument: 'ES 12-25', instrumentType: 'Future',
  position: 0, marketPosition: 'Short', positionStrategy: 0, price: 5804.5, quantity: 1,
};

describe('reading an Execution', () => {
  it('takes the documented fields: a Short fill is a SELL, no commission field is 0, the epoch is the time', () => {
    expect(executionFill(documented, undefined)).toEqual({
      id: documented.id, account: 'Sim101', instrument: 'ES 12-25', action: 'SELL', quantity: 1, price: 5804.5, time: 1758928178373,
      commission: 0, orderId: documented.orderId, positionAfter: 0, body: JSON.stringify(documented),
    });
  });

  it("without an epoch reads the time as Chicago's, the account from the request when the object has none", () => {
    const { epoch: _epoch, account: _account, ...bare } = documented;
    // 18:09:38.373 Chicago daylight time is 23:09:38.373Z.
    expect(executionFill(bare, 'Sim101')).toMatchObject({ account: 'Sim101', time: Date.parse('2025-09-26T23:09:38.373Z') });
  });

  it('leaves out what a report cannot use: no id, no side, no price, a quantity that is no whole number above 0', () => {
    for (const broken of [{ id: undefined }, { marketPosition: 'Flat' }, { price: 'x' }, { quantity: 0 }, { quantity: 1.5 }, { epoch: undefined, time: 'yesterday' }])
      expect(executionFill({ ...documented, ...broken }, 'Sim101')).toBeUndefined();
    expect(executionFill([documented], 'Sim101')).toBeUndefined();
  });
});

describe('the history file', () => {
  it('records each execution once by its id, per service, and gives back a report its fills, oldest first', () => {
    const later = { ...documented, id: 'b'.repeat(32), epoch: documented.epoch + 60_000, marketPosition: 'Long', position: 1 };
    expect(history.record('app.example.com', [later, documented], 1)).toBe(2);
    expect(history.record('app.example.com', [documented], 2)).toBe(0);
    expect(history.record('127.0.0.1:4000', [documented], 3)).toBe(1);
    const fills = history.fills('app.example.com', ['sim101'], documented.epoch + 60_000);
    expect(fills.map((f) => [f.id, f.action, f.positionAfter])).toEqual([
      [documented.id, 'SELL', 0],
      ['b'.repeat(32), 'BUY', 1],
    ]);
    expect(history.fills('app.example.com', ['Sim101'], documented.epoch)).toHaveLength(1);
    expect(history.bodies('app.example.com', ['Sim101'], 0).map((b) => b.body)).toEqual([documented, later]);
  });

  it('merges the stretches seen that overlap or touch, per account', () => {
    history.cover('svc', 'Sim101', 1000, 2000);
    history.cover('svc', 'Sim101', 3000, 4000);
    history.cover('svc', 'Sim102', 1500, 3500);
    expect(history.seen('svc', ['Sim101'])).toEqual([
      { account: 'Sim101', from: 1000, to: 2000 },
      { account: 'Sim101', from: 3000, to: 4000 },
    ]);
    history.cover('svc', 'Sim101', 2000, 3000);
    expect(history.seen('svc', ['Sim101', 'Sim102'])).toEqual([
      { account: 'Sim101', from: 1000, to: 4000 },
      { account: 'Sim102', from: 1500, to: 3500 },
    ]);
  });

  it('keys a service by its host: http and ws to one service share a history', () => {
    expect(historyService('http', 'https://app.crosstrade.io')).toBe('app.crosstrade.io');
    expect(historyService('ws', 'wss://app.crosstrade.io/ws/stream')).toBe('app.crosstrade.io');
    expect(historyService('http', 'http://127.0.0.1:4000/v1/api')).toBe(historyService('ws', 'ws://127.0.0.1:4000/ws/stream'));
  });

  it('a file that is not a database is a typed error naming it', () => {
    const file = join(dir, 'bad.db');
    require('node:fs').writeFileSync(file, 'not a database at all, not even close to one');
    expect(() => openHistory(file)).toThrow(file);
  });
});
