/**
 * The simulator answering the reads of service-reference.md §3.9 and §3.15–§3.19 (orders,
 * positions, accounts, quotes, executions, bars) with the exact bodies of §4, money in the point
 * values of §10, and the trading day that starts at 17:00 Chicago of the day before.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ok, orderObject, positionObject, serve, testEngine, type TestEngine } from '../helpers/engine.js';
import { positionObject as shapeOfPosition } from '../../src/engine/service-shapes.js';
import { createEngine } from '../../src/engine/engine.js';
import { positionsOf } from '../../src/engine/service.js';

let t: TestEngine;
beforeEach(() => {
  t = testEngine();
  t.engine.addAccount('Sim102');
});
afterEach(() => t.cleanup());

const BASE = { account: 'Sim101', instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' };
const place = (args: Record<string, unknown> = {}): string => ok(t.engine, 'PlaceOrder', { ...BASE, ...args }).orderId;
const cancel = (orderId: string) => ok(t.engine, 'Cancel', { account: 'Sim101', orderId });
/** Sets the clock, then a price. */
const priceAt = (time: string, instrument: string, price: number) => (t.setTime(time), t.engine.setPrice(instrument, price));
const idsOf = (body: { orders: Array<{ orderId: string }> }) => body.orders.map((o) => o.orderId);

describe('GetOrder and GetOrderStatus (§3.9)', () => {
  it('answers the whole Order object of §4.1, for an ATM entry and its brackets too', () => {
    t.engine.addAtmTemplate({ name: 'Scalp', stopLossTicks: 8, profitTargetTicks: 16, tickSize: 0.25 });
    t.engine.setPrice('ES 09-25', 100);
    place({ quantity: 2, strategy: 'Scalp', timeInForce: 'GTC', orderId: 'entry' });
    // The entry's id is its client's (its row id the store's own): the brackets take the first two.
    const [stop, target] = [t.id(1), t.id(2)];
    const owner = { id: 'entry', name: 'Scalp', displayName: 'Scalp' };
    const common = { quantity: 2, timeInForce: 'Gtc', ownerStrategy: owner } as const;
    expect(serve(t.engine, 'GetOrder', { account: 'sim101', orderId: 'entry' })).toEqual({
      status: 200,
      body: { ...orderObject({ ...common, orderId: 'entry', orderState: 'Filled', filled: 2, averageFillPrice: 100, name: 'Entry' }), success: true },
    });
    expect(ok(t.engine, 'GetOrder', { account: 'Sim101', orderId: stop })).toEqual({
      ...orderObject({ ...common, orderId: stop, orderType: 'StopMarket', orderAction: 'Sell', stopPrice: 98, name: 'Stop1', ocoId: 'ATM-entry' }),
      success: true,
    });
    expect(ok(t.engine, 'GetOrder', { account: 'Sim101', orderId: target })).toEqual({
      ...orderObject({ ...common, orderId: target, orderType: 'Limit', orderAction: 'Sell', limitPrice: 104, name: 'Target1', ocoId: 'ATM-entry' }),
      success: true,
    });
  });

  it.each([
    ['Working', () => place({ orderType: 'LIMIT', limitPrice: 90 })],
    ['Filled', () => place()],
    ['Cancelled', () => {
      const id = place({ orderType: 'LIMIT', limitPrice: 90 });
      cancel(id);
      return id;
    }],
    // A DAY order expires at 16:00 Chicago: NT8 shows it Cancelled.
    ['Cancelled', () => {
      const id = place({ orderType: 'LIMIT', limitPrice: 90 });
      t.setTime('2025-09-02T21:00:00Z');
      return id;
    }],
  ])('GetOrderStatus answers %s with the order id', (status, make) => {
    t.engine.setPrice('ES 09-25', 100);
    const orderId = make();
    expect(serve(t.engine, 'GetOrderStatus', { account: 'Sim101', orderId })).toEqual({ status: 200, body: { status, orderId, success: true } });
  });

  it.each([
    ['an unknown order', () => 'nope'],
    ["another account's order", () => place({ account: 'Sim102', orderType: 'LIMIT', limitPrice: 90, orderId: 'nope' })],
  ])('refuses %s, naming the account in its canonical spelling', (_what, make) => {
    const id = make();
    const refusal = { status: 400, body: { error: `Invalid request: orderId: order '${id}' not found in account 'Sim101'` } };
    expect(serve(t.engine, 'GetOrder', { account: 'sim101', orderId: id })).toEqual(refusal);
    expect(serve(t.engine, 'GetOrderStatus', { account: 'sim101', orderId: id })).toEqual(refusal);
  });

  it('refuses an unknown account with the invalid_account body (404)', () => {
    expect(serve(t.engine, 'GetOrder', { account: 'Sim999', orderId: 'x' })).toEqual({
      status: 404,
      body: { success: false, error: 'invalid_account', detail: 'Account Sim999 not found' },
    });
  });
});

describe('GetOrders (§3.9)', () => {
  it.each([
    ['summer (CDT)', '2025-09-01T22:00:00.000Z', '2025-09-02T14:00:00Z'],
    ['winter (CST)', '2026-01-12T23:00:00.000Z', '2026-01-13T15:00:00Z'],
  ])(
    'by default: the active orders and those created or updated since 17:00 Chicago of the day before, oldest first, in %s',
    (_season, start, now) => {
      const at = (ms: number) => t.setTime(new Date(Date.parse(start) + ms).toISOString());
      at(-3_600_000);
      t.engine.setPrice('ES 09-25', 100);
      const active = place({ orderType: 'LIMIT', limitPrice: 90, timeInForce: 'GTC' });
      place(); // filled before the trading day began
      const before = place({ orderType: 'LIMIT', limitPrice: 91, timeInForce: 'GTC' });
      const atStart = place({ orderType: 'LIMIT', limitPrice: 92, timeInForce: 'GTC' });
      place({ account: 'Sim102', orderType: 'LIMIT', limitPrice: 93, timeInForce: 'GTC' });
      at(-1);
      cancel(before);
      at(0);
      cancel(atStart);
      t.setTime(now);
      const today = place({ action: 'SELL' });
      const body = ok(t.engine, 'GetOrders', { account: 'sim101' });
      expect(idsOf(body)).toEqual([active, atStart, today]);
      expect(body).toEqual({ orders: body.orders, count: 3, success: true });
      expect(body.orders[0]).toEqual(orderObject({ orderId: active, orderType: 'Limit', limitPrice: 90, timeInForce: 'Gtc', time: body.orders[0].time }));
      expect(idsOf(ok(t.engine, 'GetOrders', { account: 'Sim101', activeOnly: true }))).toEqual([active]);
      expect(idsOf(ok(t.engine, 'GetOrders', { account: 'Sim101', activeOnly: false }))).toEqual([active, atStart, today]);
    },
  );

  it('from 17:00 Chicago on, the next trading day has begun: the afternoon before is no longer listed', () => {
    t.engine.setPrice('ES 09-25', 100);
    t.setTime('2025-09-02T21:59:59.999Z');
    place();
    t.setTime('2025-09-02T22:30:00Z');
    const evening = place();
    expect(idsOf(ok(t.engine, 'GetOrders', { account: 'Sim101' }))).toEqual([evening]);
  });

  it('a DAY order that expired at the session end before the trading day is not listed', () => {
    t.setTime('2025-09-01T20:00:00Z');
    place({ orderType: 'LIMIT', limitPrice: 90 });
    t.setTime('2025-09-02T14:00:00Z');
    expect(ok(t.engine, 'GetOrders', { account: 'Sim101' })).toEqual({ orders: [], count: 0, success: true });
  });
});

describe('GetPosition, GetAllPositions, GetPositions (§3.15)', () => {
  it('a flat instrument is the Flat shape, never an error; marketPrice is the last price, 0 without one', () => {
    expect(serve(t.engine, 'GetPosition', { account: 'sim101', instrument: 'ES 09-25' })).toEqual({ status: 200, body: { ...positionObject({}), success: true } });
    t.engine.setPrice('ES 09-25', 100);
    place({ quantity: 2 });
    place({ action: 'SELL', quantity: 2 });
    t.engine.setPrice('ES 09-25', 101);
    expect(ok(t.engine, 'GetPosition', { account: 'Sim101', instrument: 'ES 09-25' })).toEqual({ ...positionObject({ marketPrice: 101 }), success: true });
  });

  it.each([
    ['ES', 50],
    ['MES', 5],
    ['NQ', 20],
    ['MNQ', 2],
    ['YM', 5],
    ['MYM', 0.5],
    ['RTY', 50],
    ['M2K', 5],
    ['ZN', 1000],
    ['ZB', 1000],
    ['CL', 1000],
    ['MCL', 100],
    ['NG', 10000],
    ['GC', 100],
    ['MGC', 10],
    ['SI', 5000],
    ['6E', 125000],
    ['ZC', 50],
    ['ZS', 50],
  ])('%s: unrealized P&L is the price move × quantity × %s (§10), negated for a short', (root, pointValue) => {
    const instrument = `${root} 12-25`;
    // A move on every root's tick grid: 1.5 points, or 3 for the Dow's whole-point tick.
    const move = root === 'YM' || root === 'MYM' ? 3 : 1.5;
    t.engine.setPrice(instrument, 100);
    place({ instrument, quantity: 2 });
    place({ account: 'Sim102', instrument, action: 'SELL', quantity: 3 });
    t.engine.setPrice(instrument, 100 + move);
    expect(ok(t.engine, 'GetPosition', { account: 'Sim101', instrument })).toEqual({
      ...positionObject({ instrument, marketPosition: 'Long', quantity: 2, averagePrice: 100, marketPrice: 100 + move, unrealizedProfitLoss: 2 * move * pointValue }),
      success: true,
    });
    expect(ok(t.engine, 'GetPosition', { account: 'Sim102', instrument })).toMatchObject({ marketPosition: 'Short', quantity: 3, unrealizedProfitLoss: -3 * move * pointValue });
  });

  it('GetAllPositions lists every account, flat ones only with includeFlat; GetPositions one account', () => {
    t.engine.setPrice('ES 09-25', 100);
    t.engine.setPrice('NQ 09-25', 200);
    place({ instrument: 'NQ 09-25' });
    place({ instrument: 'NQ 09-25', action: 'SELL' });
    place({ quantity: 2 });
    place({ account: 'Sim102', action: 'SELL' });
    const a = positionObject({ marketPosition: 'Long', quantity: 2, averagePrice: 100, marketPrice: 100 });
    const aFlat = positionObject({ instrument: 'NQ 09-25', marketPrice: 200 });
    const b = positionObject({ account: 'Sim102', marketPosition: 'Short', quantity: 1, averagePrice: 100, marketPrice: 100 });
    expect(ok(t.engine, 'GetAllPositions', {})).toEqual({ positions: [a, b], count: 2, success: true });
    expect(ok(t.engine, 'GetAllPositions', { includeFlat: true })).toEqual({ positions: [a, aFlat, b], count: 3, success: true });
    expect(ok(t.engine, 'GetPositions', { account: 'sim101' })).toEqual({ positions: [a], count: 1, success: true });
    expect(ok(t.engine, 'GetPositions', { account: 'Sim101', includeFlat: 'true' })).toEqual({ positions: [a, aFlat], count: 2, success: true });
    expect(ok(t.engine, 'GetPositions', { account: 'Sim102' })).toEqual({ positions: [b], count: 1, success: true });
  });

  it('the positions and their prices read together are the positions read alone, each priced by its own read (issue 34)', () => {
    // Long, short and flat, in two accounts, one instrument never priced by a price of its own
    // in one account (a demo price), and fractional prices whose JSON must not change.
    t.engine.setPrice('ES 09-25', 6001.25);
    t.engine.setPrice('NQ 09-25', 21000.75);
    place({ quantity: 3 });
    place({ instrument: 'NQ 09-25', action: 'SELL', quantity: 2 });
    place({ account: 'Sim102', instrument: 'NQ 09-25' });
    place({ account: 'Sim102', instrument: 'NQ 09-25', action: 'SELL' });
    place({ account: 'Sim102', instrument: 'CL 10-25', action: 'SELL', quantity: 4 });
    t.engine.setPrice('ES 09-25', 6003.5);
    t.engine.setPrice('NQ 09-25', 20999.25);
    const filters = [{}, { includeFlat: true }, { account: 'sim101' }, { account: 'Sim102' }, { account: 'Sim102', includeFlat: true }, { account: 'Sim102', instrument: 'NQ 09-25', includeFlat: true }, { instrument: 'ES 09-25' }];
    for (const filter of filters) {
      const priced = t.engine.listPricedPositions(filter);
      expect(priced.map((p) => p.position)).toEqual(t.engine.listPositions(filter));
      expect(priced.map((p) => p.last)).toEqual(priced.map((p) => t.engine.lastPrice(p.position.instrument)));
    }
    const sides = t.engine.listPricedPositions({ includeFlat: true }).map(({ position }) => [position.account, position.instrument, position.quantity]);
    expect(sides).toEqual([
      ['Sim101', 'ES 09-25', 3],
      ['Sim101', 'NQ 09-25', -2],
      ['Sim102', 'CL 10-25', -4],
      ['Sim102', 'NQ 09-25', 0],
    ]);
    // The reply's JSON, byte for byte, as the position objects of the reads one by one made it.
    const alone = (account: string, includeFlat: boolean) =>
      JSON.stringify(t.engine.listPositions({ account, includeFlat }).map((p) => shapeOfPosition(t.engine, p)));
    for (const [account, includeFlat] of [['Sim101', false], ['Sim102', false], ['Sim102', true]] as const) {
      expect(JSON.stringify(ok(t.engine, 'GetPositions', { account, includeFlat: String(includeFlat) }).positions)).toBe(alone(account, includeFlat));
    }
  });

  it('the same read of an unchanged store is answered again; any change, by this connection or another, or inside a transaction, is read anew (issue 34)', () => {
    t.engine.setPrice('ES 09-25', 100);
    place({ quantity: 2 });
    const first = t.engine.listPricedPositions({ account: 'Sim101' });
    expect(t.engine.listPricedPositions({ account: 'Sim101' })).toBe(first);
    // And so are the service's objects made from it, which GetPositions answers.
    const objects = positionsOf(t.engine, 'Sim101');
    expect(positionsOf(t.engine, 'Sim101')).toBe(objects);
    expect(ok(t.engine, 'GetPositions', { account: 'Sim101' }).positions).toBe(objects);
    // Another filter is another read.
    expect(t.engine.listPricedPositions({ account: 'Sim101', includeFlat: true })).not.toBe(first);
    const quantities = () => t.engine.listPricedPositions({ account: 'Sim101' }).map(({ position, last }) => [position.instrument, position.quantity, last]);
    // This connection's own changes: an order, a price.
    place();
    expect(quantities()).toEqual([['ES 09-25', 3, 100]]);
    expect(positionsOf(t.engine, 'Sim101')).toEqual([shapeOfPosition(t.engine, t.engine.getPosition('Sim101', 'ES 09-25')!)]);
    expect(positionsOf(t.engine, 'Sim101')[0]).toMatchObject({ quantity: 3, marketPrice: 100 });
    t.engine.setPrice('ES 09-25', 101);
    expect(quantities()).toEqual([['ES 09-25', 3, 101]]);
    // Another connection's commit (another process's `trade place`).
    const other = createEngine(t.file);
    try {
      other.placeOrder({ account: 'Sim101', instrument: 'ES 09-25', action: 'SELL', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' });
      expect(quantities()).toEqual([['ES 09-25', 2, 101]]);
      other.setPrice('ES 09-25', 99);
      expect(quantities()).toEqual([['ES 09-25', 2, 99]]);
    } finally {
      other.close();
    }
    // Inside a transaction the read sees what the transaction wrote so far, and is not kept: an
    // operation that fails after its writes is rolled back, and total_changes() stays where it was.
    t.engine.setPrice('NQ 09-25', 200);
    const before = quantities();
    const [result] = t.engine.group([
      () => {
        t.engine.placeOrder({ account: 'Sim101', instrument: 'NQ 09-25', action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' });
        expect(quantities()).toEqual([...before, ['NQ 09-25', 1, 200]]);
        throw new Error('failed after its writes');
      },
    ]);
    expect(result).toMatchObject({ ok: false, error: { message: 'failed after its writes' } });
    expect(quantities()).toEqual(before);
  });
});

describe('ListAccounts, GetAccount, GetSnapshot (§3.16, §4.3)', () => {
  const ITEM_FIELDS = [
    'buyingPower', 'cashValue', 'commission', 'dailyLossLimit', 'dailyProfitTrigger', 'excessInitialMargin', 'excessIntradayMargin',
    'excessMaintenanceMargin', 'excessPositionMargin', 'fee', 'grossRealizedProfitLoss', 'initialMargin', 'intradayMargin',
    'longOptionValue', 'longStockValue', 'lookAheadMaintenanceMargin', 'maintenanceMargin', 'netLiquidation', 'netLiquidationByCurrency',
    'positionMargin', 'realizedProfitLoss', 'shortOptionValue', 'shortStockValue', 'sodCashValue', 'sodLiquidatingValue', 'totalCashBalance',
    'trailingMaxDrawdown', 'unrealizedProfitLoss', 'weeklyLossLimit', 'weeklyProfitLoss', 'weeklyProfitTrigger',
  ];
  /** The Account object of §4.3: every other item field 0.0. */
  const account = (id: number, name: string, flat: boolean, money: Record<string, number>) => ({
    type: 'NinjaTrader.Cbi.Account', id, name, displayName: name, primaryUser: null, provider: 'Simulator', denomination: 'UsDollar',
    status: 'Enabled', dailyLossLimit: 0, minCashValue: 0, maxOrderSize: 0, maxPositionSize: 0, connection: 'NinjaTrader.Cbi.Connection',
    connectionStatus: 'Connected', lastTransactionSum: 0, isAccountFlat: flat,
    item: { ...Object.fromEntries(ITEM_FIELDS.map((f) => [f, 0])), ...money },
  });

  /**
   * Sim101: +500 realized on the previous trading day (ES, 10 points), +200 today (ES, 4 points),
   * long 1 ES from 100 at 106 (+300) and short 1 NQ from 200 at 190 (+200). Sim102: nothing.
   */
  function trade() {
    priceAt('2025-09-01T18:00:00Z', 'ES 09-25', 100);
    place();
    t.engine.setPrice('ES 09-25', 110);
    place({ action: 'SELL' });
    priceAt('2025-09-02T14:00:00Z', 'ES 09-25', 100);
    place({ quantity: 2 });
    t.engine.setPrice('ES 09-25', 104);
    place({ action: 'SELL' });
    t.engine.setPrice('ES 09-25', 106);
    t.engine.setPrice('NQ 09-25', 200);
    place({ instrument: 'NQ 09-25', action: 'SELL' });
    t.engine.setPrice('NQ 09-25', 190);
  }
  const sim101 = () =>
    account(1, 'Sim101', false, { cashValue: 100_700, realizedProfitLoss: 200, unrealizedProfitLoss: 500, netLiquidation: 101_200 });
  const sim102 = () => account(2, 'Sim102', true, { cashValue: 100_000, netLiquidation: 100_000 });

  it('GetAccount: cash = start + realized − commission, realized of the trading day, unrealized of the open positions, net liquidation', () => {
    trade();
    expect(serve(t.engine, 'GetAccount', { account: 'sim101' })).toEqual({ status: 200, body: { ...sim101(), success: true } });
    expect(ok(t.engine, 'GetAccount', { account: 'Sim102' })).toEqual({ ...sim102(), success: true });
  });

  it('ListAccounts lists every account with its figures', () => {
    trade();
    expect(ok(t.engine, 'ListAccounts', {})).toEqual({ accounts: [sim101(), sim102()], count: 2, success: true });
  });

  it('GetSnapshot: every account with its open positions, at one moment in Chicago time and epoch milliseconds', () => {
    trade();
    expect(ok(t.engine, 'GetSnapshot', {})).toEqual({
      type: 'snapshot',
      timestamp: '2025-09-02T09:00:00.0000000-05:00',
      epoch: Date.parse('2025-09-02T14:00:00Z'),
      accounts: [
        {
          account: sim101(),
          positions: [
            positionObject({ marketPosition: 'Long', quantity: 1, averagePrice: 100, marketPrice: 106, unrealizedProfitLoss: 300 }),
            positionObject({ instrument: 'NQ 09-25', marketPosition: 'Short', quantity: 1, averagePrice: 200, marketPrice: 190, unrealizedProfitLoss: 200 }),
          ],
        },
        { account: sim102(), positions: [] },
      ],
      success: true,
    });
  });

  it("the next trading day's realized P&L starts at 0 while the cash keeps it", () => {
    trade();
    t.setTime('2025-09-02T22:30:00Z');
    expect(ok(t.engine, 'GetAccount', { account: 'Sim101' }).item).toMatchObject({ cashValue: 100_700, realizedProfitLoss: 0 });
  });

  it('an unknown account is 404 invalid_account', () => {
    expect(serve(t.engine, 'GetAccount', { account: 'Sim999' })).toEqual({
      status: 404,
      body: { success: false, error: 'invalid_account', detail: 'Account Sim999 not found' },
    });
  });
});

describe('GetQuote (§3.17, §4.4)', () => {
  /** Yesterday 100 then 101; today 102, 99 (a fill of 2), 105, 103 (a fill of 3). */
  function day() {
    priceAt('2025-09-01T20:00:00Z', 'ES 09-25', 100);
    priceAt('2025-09-01T21:00:00Z', 'ES 09-25', 101);
    priceAt('2025-09-01T22:30:00Z', 'ES 09-25', 102);
    priceAt('2025-09-01T23:00:00Z', 'ES 09-25', 99);
    place({ quantity: 2 });
    priceAt('2025-09-02T13:00:00Z', 'ES 09-25', 105);
    priceAt('2025-09-02T13:30:00Z', 'ES 09-25', 103);
    place({ action: 'SELL', quantity: 3 });
    t.setTime('2025-09-02T14:00:00Z');
  }
  const ES = {
    description: 'E-mini S&P 500 Futures', type: 'Future', tickSize: 0.25, pointValue: 50, tickValue: 12.5, exchange: 'Globex',
    expiration: '2025-09-01', tradingHours: 'CME US Index Futures ETH', instrument: 'ES 09-25', bid: 103, ask: 103, last: 103,
    open: 102, high: 105, low: 99, close: 101, volume: 5, quoteTime: '09/02/2025 08:30:00 AM', quoteTimeUtc: '2025-09-02 13:30:00',
    epoch: Date.parse('2025-09-02T13:30:00Z') / 1000, dataSource: { status: 'Simulated', connectedFeeds: ['Simulated'] }, isMarketOpen: true,
  };

  it("one instrument: the Quote object, its day from the store's prices and fills, close the previous day's last", () => {
    day();
    expect(serve(t.engine, 'GetQuote', { instrument: 'ES 09-25' })).toEqual({ status: 200, body: { ...ES, success: true } });
    expect(ok(t.engine, 'GetQuoteLegacy', { account: 'sim101', instrument: 'ES 09-25' })).toEqual({ ...ES, success: true });
  });

  it('several: an array of Quote objects without success', () => {
    day();
    t.engine.setPrice('NQ 09-25', 20_000);
    const body = ok(t.engine, 'GetQuote', { instrument: 'ES 09-25,NQ 09-25' });
    expect(body).toEqual([ES, expect.objectContaining({ instrument: 'NQ 09-25', last: 20_000, open: 20_000, close: 20_000, volume: 0, pointValue: 20 })]);
  });

  it('with no price today: open, high, low and close are the last price, volume 0; closed in the daily break', () => {
    priceAt('2025-09-01T20:00:00Z', 'ES 09-25', 100);
    priceAt('2025-09-01T21:00:00Z', 'ES 09-25', 101);
    t.setTime('2025-09-02T21:30:00Z');
    expect(ok(t.engine, 'GetQuote', { instrument: 'ES 09-25' })).toMatchObject({ last: 101, open: 101, high: 101, low: 101, close: 101, volume: 0, isMarketOpen: false });
  });

  it('an instrument with no price is an error naming every such instrument, not a zero', () => {
    t.engine.setPrice('ES 09-25', 100);
    expect(serve(t.engine, 'GetQuote', { instrument: 'NQ 09-25' })).toEqual({ status: 400, body: { error: 'Invalid request: instrument: no price for NQ 09-25' } });
    expect(serve(t.engine, 'GetQuote', { instrument: 'ES 09-25,NQ 09-25,CL 10-25' })).toEqual({
      status: 400,
      body: { error: 'Invalid request: instrument: no price for NQ 09-25, CL 10-25' },
    });
  });

  it('the legacy route needs a known account', () => {
    t.engine.setPrice('ES 09-25', 100);
    expect(serve(t.engine, 'GetQuoteLegacy', { account: 'Sim999', instrument: 'ES 09-25' }).status).toBe(404);
  });
});

describe('GetExecutions and GetExecution (§3.19, §4.5)', () => {
  /** Buy 1 at 100 (420 s before 14:00), sell 3 at 102 (100 s before: long 1 to short 2), buy 2 at 101 at 14:00 (flat). */
  function fills() {
    priceAt('2025-09-02T13:53:00Z', 'ES 09-25', 100);
    place({ orderId: 'e1' });
    priceAt('2025-09-02T13:58:20Z', 'ES 09-25', 102);
    place({ action: 'SELL', quantity: 3, orderId: 'e2' });
    priceAt('2025-09-02T14:00:00Z', 'ES 09-25', 101);
    place({ quantity: 2, orderId: 'e3' });
    place({ account: 'Sim102', orderId: 'other' });
  }
  const execution = (orderId: string, time: string, fields: Record<string, unknown>) => ({
    id: expect.stringMatching(/^[0-9a-f]{32}$/), type: 'NinjaTrader.Cbi.Execution', time, orderId, account: 'Sim101', serverName: 'trade-serve',
    instrument: 'ES 09-25', instrumentType: 'Future', positionStrategy: 0, commission: 0, ...fields,
  });
  const E1 = execution('e1', '2025-09-02T08:53:00.0000000', {
    epoch: Date.parse('2025-09-02T13:53:00Z'), name: 'Entry', position: 1, marketPosition: 'Long', price: 100, quantity: 1, isEntry: true, isExit: false,
  });
  const E2 = execution('e2', '2025-09-02T08:58:20.0000000', {
    epoch: Date.parse('2025-09-02T13:58:20Z'), name: 'Exit', position: 2, marketPosition: 'Short', price: 102, quantity: 3, isEntry: true, isExit: true,
  });
  const E3 = execution('e3', '2025-09-02T09:00:00.0000000', {
    epoch: Date.parse('2025-09-02T14:00:00Z'), name: 'Exit', position: 0, marketPosition: 'Long', price: 101, quantity: 2, isEntry: false, isExit: true,
  });

  it.each([
    [undefined, [E2, E3]],
    [900, [E1, E2, E3]],
    [420, [E1, E2, E3]],
    [419, [E2, E3]],
    [100, [E2, E3]],
    [1, [E3]],
  ])('lookbackTime %s: the fills of the account in that window, oldest first', (lookbackTime, expected) => {
    fills();
    const body = ok(t.engine, 'GetExecutions', { account: 'sim101', ...(lookbackTime === undefined ? {} : { lookbackTime }) });
    expect(body).toEqual({ executions: expected, count: expected.length, success: true });
  });

  it('GetExecution answers one fill by its id, in its own account only', () => {
    fills();
    const [second] = ok(t.engine, 'GetExecutions', { account: 'Sim101' }).executions;
    expect(serve(t.engine, 'GetExecution', { account: 'sim101', executionId: second.id })).toEqual({ status: 200, body: { ...E2, id: second.id, success: true } });
    const [other] = ok(t.engine, 'GetExecutions', { account: 'Sim102' }).executions;
    for (const executionId of ['nope', other.id])
      expect(serve(t.engine, 'GetExecution', { account: 'sim101', executionId })).toEqual({
        status: 400,
        body: { error: `Invalid request: executionId: execution '${executionId}' not found in account 'Sim101'` },
      });
  });
});

describe('GetBars (§3.18)', () => {
  /** Prices 100 (14:00:10), 102 with a fill of 2 (14:00:40), 101 (14:01:05), 99 (14:03:00); now 14:05. */
  function ticks() {
    priceAt('2025-09-02T14:00:10Z', 'ES 09-25', 100);
    priceAt('2025-09-02T14:00:40Z', 'ES 09-25', 102);
    place({ quantity: 2 });
    priceAt('2025-09-02T14:01:05Z', 'ES 09-25', 101);
    priceAt('2025-09-02T14:03:00Z', 'ES 09-25', 99);
    t.setTime('2025-09-02T14:05:00Z');
  }
  const bar = (time: string, open: number, high: number, low: number, close: number, volume: number) => ({
    time: `${time}.0000000Z`, epoch: Date.parse(`${time}Z`), open, high, low, close, volume,
  });
  const bars = (args: Record<string, unknown>) => ok(t.engine, 'GetBars', { instrument: 'ES 09-25', ...args });

  it('minute bars from the price history: every price a tick of volume 0, every fill one of its quantity', () => {
    ticks();
    const minute = [bar('2025-09-02T14:00:00', 100, 102, 100, 102, 2), bar('2025-09-02T14:01:00', 101, 101, 101, 101, 0), bar('2025-09-02T14:03:00', 99, 99, 99, 99, 0)];
    expect(bars({})).toEqual({ instrument: 'ES 09-25', periodType: 'minute', period: 1, count: 3, bars: minute, success: true });
    expect(bars({ limit: 2 })).toMatchObject({ count: 2, bars: minute.slice(1) });
    expect(bars({ period: 2 })).toMatchObject({ period: 2, bars: [bar('2025-09-02T14:00:00', 100, 102, 100, 101, 2), bar('2025-09-02T14:02:00', 99, 99, 99, 99, 0)] });
    expect(bars({ from: '2025-09-02T14:01:00Z', to: '2025-09-02T14:02:00Z' })).toMatchObject({ count: 1, bars: [minute[1]] });
  });

  it('second and day bars (a day is a Chicago calendar day)', () => {
    ticks();
    expect(bars({ periodType: 'second' })).toMatchObject({
      periodType: 'second',
      count: 4,
      bars: [
        bar('2025-09-02T14:00:10', 100, 100, 100, 100, 0),
        bar('2025-09-02T14:00:40', 102, 102, 102, 102, 2),
        bar('2025-09-02T14:01:05', 101, 101, 101, 101, 0),
        bar('2025-09-02T14:03:00', 99, 99, 99, 99, 0),
      ],
    });
    expect(bars({ periodType: 'day' })).toMatchObject({ periodType: 'day', count: 1, bars: [bar('2025-09-02T05:00:00', 100, 102, 99, 99, 2)] });
  });

  it('no history: count 0; a period type the simulator does not build is refused', () => {
    expect(bars({})).toEqual({ instrument: 'ES 09-25', periodType: 'minute', period: 1, count: 0, bars: [], success: true });
    expect(serve(t.engine, 'GetBars', { instrument: 'ES 09-25', periodType: 'week' })).toEqual({
      status: 400,
      body: { error: 'Invalid request: periodType: not supported by the simulator' },
    });
  });
});
