/** The REST routes over a real socket: statuses, exact bodies, and the store after each request. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { INTERNAL_ERROR_BODY } from '../../src/server/operations.js';
import { ES_MARKET, startServer, type Harness } from './harness.js';

const PLACE = '/v1/api/accounts/Sim101/orders/place';
const REVERSE = '/v1/api/accounts/Sim101/positions/reverseposition';
const ORDER_ID = expect.stringMatching(/^[0-9a-f]{32}$/);
const NOBODY = { success: false, error: 'invalid_account', detail: 'Account Nobody not found' };
const TIME = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}$/);

let server: Harness;
beforeEach(async () => {
  server = await startServer();
});
afterEach(() => server.close());

/** Sends a request that must be refused, and checks that the store did not move. */
async function refused(method: string, path: string, body?: unknown) {
  const before = server.snapshot();
  const reply = await server.http(method, path, { body });
  expect(server.snapshot()).toEqual(before);
  return { status: reply.status, body: reply.body };
}

describe('POST /v1/api/accounts/{account}/orders/place', () => {
  it('places an order: 200 {orderId, success:true}, and the store has it', async () => {
    const reply = await server.post(PLACE, ES_MARKET);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ orderId: ORDER_ID, success: true });
    expect(reply.headers['content-type']).toMatch(/^application\/json/);
    const [order] = server.engine.listOrders();
    expect(order).toMatchObject({ id: (reply.body as { orderId: string }).orderId, account: 'Sim101', state: 'FILLED' });
    expect(server.engine.getPosition('Sim101', 'ES 09-25')?.quantity).toBe(1);
  });

  it('matches the account in any case and stores its canonical name', async () => {
    server.engine.addAtmTemplate({ name: 'ATM 2', stopLossTicks: 8, profitTargetTicks: 16, tickSize: 0.25 });
    const reply = await server.post('/v1/api/accounts/sim101/orders/place', {
      ...ES_MARKET,
      orderType: 'LIMIT',
      limitPrice: 4500.25,
      timeInForce: 'GTC',
      ocoId: 'grp-1',
      strategy: 'ATM 2',
    });
    expect(reply).toMatchObject({ status: 200, body: { orderId: ORDER_ID, success: true } });
    expect(server.engine.listOrders()).toEqual([
      expect.objectContaining({ account: 'Sim101', orderType: 'LIMIT', limitPrice: 4500.25, state: 'WORKING', ocoId: 'grp-1' }),
    ]);
  });

  it("answers 400 with the schema's message, naming every bad field, and stores nothing", async () => {
    expect(await refused('POST', PLACE, { ...ES_MARKET, instrument: 'ES 13-25', action: 'HOLD', quantity: 0 })).toEqual({
      status: 400,
      body: {
        error:
          "Invalid request: instrument: month must be 01-12, got '13' in 'ES 13-25'; action: must be BUY or SELL (any case), got 'HOLD'; quantity: must be at least 1, got 0",
      },
    });
    expect(await refused('POST', PLACE, { ...ES_MARKET, orderType: 'LIMIT' })).toEqual({
      status: 400,
      body: { error: 'Invalid request: limitPrice: is required for LIMIT orders' },
    });
    expect(await refused('POST', PLACE, { instrument: 'ES 09-25' })).toEqual({
      status: 400,
      body: {
        error:
          'Invalid request: action: is required; quantity: is required; orderType: is required; timeInForce: is required',
      },
    });
  });

  it('ignores unknown body fields, and an account in the body never redirects the order (§1.3)', async () => {
    server.engine.addAccount('Other');
    const reply = await server.post(PLACE, { ...ES_MARKET, account: 'Other', comment: 'from a public client', tag: 7 });
    expect(reply).toMatchObject({ status: 200, body: { orderId: ORDER_ID, success: true } });
    expect(server.engine.listOrders()).toEqual([expect.objectContaining({ account: 'Sim101' })]);
  });

  it('names a bad account of the path together with the bad body fields', async () => {
    const long = 'A'.repeat(65);
    expect(await refused('POST', `/v1/api/accounts/${long}/orders/place`, { ...ES_MARKET, quantity: 1.5 })).toEqual({
      status: 400,
      body: { error: 'Invalid request: account: must be at most 64 characters; quantity: must be a whole number, got 1.5' },
    });
  });

  it('answers 404 for an unknown account, and stores nothing', async () => {
    expect(await refused('POST', '/v1/api/accounts/Nobody/orders/place', ES_MARKET)).toEqual({ status: 404, body: NOBODY });
  });

  it('validates before it looks the account up: an invalid order to an unknown account is a 400', async () => {
    expect(await refused('POST', '/v1/api/accounts/Nobody/orders/place', { ...ES_MARKET, action: 'HOLD' })).toEqual({
      status: 400,
      body: { error: "Invalid request: action: must be BUY or SELL (any case), got 'HOLD'" },
    });
  });
});

describe('POST /v1/api/accounts/{account}/positions/reverseposition', () => {
  it('without a position: 400 with the message word for word, and nothing executed', async () => {
    expect(await refused('POST', REVERSE, { ...ES_MARKET, action: 'SELL' })).toEqual({
      status: 400,
      body: { error: "No position found for instrument 'ES 09-25' in account 'Sim101'" },
    });
  });

  it('names the account as given in the no-position message', async () => {
    expect(await refused('POST', '/v1/api/accounts/sim101/positions/reverseposition', ES_MARKET)).toEqual({
      status: 400,
      body: { error: "No position found for instrument 'ES 09-25' in account 'sim101'" },
    });
  });

  it('with a position: closes it, places the new order, answers its id', async () => {
    await server.post(PLACE, { ...ES_MARKET, quantity: 2 });
    const reply = await server.post(REVERSE, { ...ES_MARKET, action: 'SELL', quantity: 1 });
    expect(reply).toMatchObject({ status: 200, body: { orderId: ORDER_ID, success: true } });
    const orders = server.engine.listOrders();
    expect(orders.map((o) => [o.action, o.quantity, o.origin])).toEqual([
      ['BUY', 2, 'client'],
      ['SELL', 2, 'reverse-close'],
      ['SELL', 1, 'client'],
    ]);
    expect(orders.at(-1)!.id).toBe((reply.body as { orderId: string }).orderId);
    expect(server.engine.getPosition('Sim101', 'ES 09-25')?.quantity).toBe(-1);
  });

  it('an invalid new order leaves the open position alone', async () => {
    await server.post(PLACE, ES_MARKET);
    expect(await refused('POST', REVERSE, { ...ES_MARKET, timeInForce: 'IOC' })).toEqual({
      status: 400,
      body: { error: "Invalid request: timeInForce: must be DAY or GTC (any case), got 'IOC'" },
    });
  });

  it('answers 404 for an unknown account', async () => {
    expect(await refused('POST', '/v1/api/accounts/Nobody/positions/reverseposition', ES_MARKET)).toEqual({ status: 404, body: NOBODY });
  });
});

describe('read routes', () => {
  it('GET /v1/api/accounts/{account}/orders lists the orders in the service shape, oldest first', async () => {
    server.engine.setPrice('ES 09-25', 4500);
    const first = (await server.post(PLACE, ES_MARKET)).body as { orderId: string };
    const second = (await server.post(PLACE, { ...ES_MARKET, instrument: 'NQ 12-25', orderType: 'LIMIT', limitPrice: 20000.5, timeInForce: 'GTC' })).body as { orderId: string };
    const reply = await server.get('/v1/api/accounts/SIM101/orders');
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      orders: [
        {
          account: 'Sim101', orderId: first.orderId, id: first.orderId, instrument: 'ES 09-25', instrumentType: 'Future',
          orderType: 'Market', orderState: 'Filled', quantity: 1, averageFillPrice: 4500, filled: 1, fromEntrySignal: null,
          gtd: '2099-12-01T00:00:00.0000000', hasOverfill: false, isBacktestOrder: false, limitPrice: 0, limitPriceChanged: 0,
          name: '', oco: '', ocoId: '', orderAction: 'Buy', ownerStrategy: null, stopPrice: 0, stopPriceChanged: 0, time: TIME,
          timeInForce: 'Day',
        },
        expect.objectContaining({ orderId: second.orderId, orderType: 'Limit', orderState: 'Working', limitPrice: 20000.5, filled: 0, averageFillPrice: 0, timeInForce: 'Gtc' }),
      ],
      count: 2,
      success: true,
    });
    const active = await server.get('/v1/api/accounts/Sim101/orders?activeOnly=True');
    expect((active.body as { orders: Array<{ orderId: string }> }).orders.map((o) => o.orderId)).toEqual([second.orderId]);
  });

  it('GET /v1/api/accounts/{account}/orders refuses an unknown account and a bad activeOnly; ignores unknown parameters', async () => {
    expect(await refused('GET', '/v1/api/accounts/Nobody/orders')).toEqual({ status: 404, body: NOBODY });
    expect(await refused('GET', '/v1/api/accounts/Sim101/orders?activeOnly=maybe')).toEqual({
      status: 400,
      body: { error: "Invalid request: activeOnly: must be true or false (or 1 or 0), got 'maybe'" },
    });
    expect(await refused('GET', '/v1/api/accounts/Sim101/orders?instrumnet=ES%2009-25')).toEqual({
      status: 200,
      body: { orders: [], count: 0, success: true },
    });
  });

  it('GET /v1/api/accounts/{account}/orders/{orderId} and .../status answer one order; an unknown id is a 400', async () => {
    const { orderId } = (await server.post(PLACE, { ...ES_MARKET, orderType: 'LIMIT', limitPrice: 4000 })).body as { orderId: string };
    expect((await server.get(`/v1/api/accounts/Sim101/orders/${orderId}`)).body).toMatchObject({
      orderId, orderState: 'Working', orderType: 'Limit', limitPrice: 4000, success: true,
    });
    expect((await server.get(`/v1/api/accounts/Sim101/orders/${orderId}/status`)).body).toEqual({ status: 'Working', orderId, success: true });
    expect(await refused('GET', '/v1/api/accounts/Sim101/orders/nope')).toEqual({
      status: 400,
      body: { error: "Invalid request: orderId: order 'nope' not found in account 'Sim101'" },
    });
    server.engine.addAccount('Sim102');
    expect((await refused('GET', `/v1/api/accounts/Sim102/orders/${orderId}/status`)).status).toBe(400);
  });

  it('GET /v1/api/positions lists the open positions of every account: unsigned quantity, marketPosition', async () => {
    server.engine.addAccount('Sim102');
    server.engine.setPrice('ES 09-25', 4500);
    await server.post(PLACE, ES_MARKET);
    await server.post('/v1/api/accounts/Sim102/orders/place', { ...ES_MARKET, action: 'SELL', quantity: 3 });
    server.engine.setPrice('ES 09-25', 4490.5);
    const position = (account: string, marketPosition: string, quantity: number, unrealizedProfitLoss: number) => ({
      type: 'NinjaTrader.Cbi.Position', account, instrument: 'ES 09-25', instrumentType: 'Future', marketPosition, quantity,
      averagePrice: 4500, marketPrice: 4490.5, unrealizedProfitLoss, tag: null,
    });
    expect((await server.get('/v1/api/positions')).body).toEqual({
      positions: [position('Sim101', 'Long', 1, -475), position('Sim102', 'Short', 3, 1425)],
      count: 2,
      success: true,
    });
    expect((await server.get('/v1/api/accounts/sim102/positions')).body).toEqual({
      positions: [position('Sim102', 'Short', 3, 1425)],
      count: 1,
      success: true,
    });
    expect(await refused('GET', '/v1/api/accounts/Nobody/positions')).toEqual({ status: 404, body: NOBODY });
  });

  it('lists flat positions only with includeFlat', async () => {
    server.engine.setPrice('ES 09-25', 4500);
    await server.post(PLACE, ES_MARKET);
    await server.post(PLACE, { ...ES_MARKET, action: 'SELL' });
    expect((await server.get('/v1/api/positions?includeFlat=false')).body).toEqual({ positions: [], count: 0, success: true });
    expect((await server.get('/v1/api/accounts/Sim101/positions?includeFlat=1')).body).toMatchObject({
      positions: [{ marketPosition: 'Flat', quantity: 0, averagePrice: 0, marketPrice: 4500, unrealizedProfitLoss: 0 }],
      count: 1,
    });
  });

  it('GET /v1/api/accounts/{account}/position?instrument= answers the Position flat, Flat when none', async () => {
    server.engine.setPrice('ES 09-25', 4500);
    await server.post(PLACE, { ...ES_MARKET, quantity: 2 });
    expect((await server.get('/v1/api/accounts/Sim101/position?instrument=ES+09-25')).body).toEqual({
      type: 'NinjaTrader.Cbi.Position', account: 'Sim101', instrument: 'ES 09-25', instrumentType: 'Future', marketPosition: 'Long',
      quantity: 2, averagePrice: 4500, marketPrice: 4500, unrealizedProfitLoss: 0, tag: null, success: true,
    });
    expect((await server.get('/v1/api/accounts/sim101/position?instrument=cl%2001-26')).body).toEqual({
      type: 'NinjaTrader.Cbi.Position', account: 'Sim101', instrument: 'CL 01-26', instrumentType: 'Future', marketPosition: 'Flat',
      quantity: 0, averagePrice: 0, marketPrice: 0, unrealizedProfitLoss: 0, tag: null, success: true,
    });
  });

  it('GET position needs a valid instrument and a known account', async () => {
    expect(await refused('GET', '/v1/api/accounts/Sim101/position')).toEqual({
      status: 400,
      body: { error: 'Invalid request: instrument: is required' },
    });
    expect(await refused('GET', '/v1/api/accounts/Sim101/position?instrument=ES2!')).toEqual({
      status: 400,
      body: { error: "Invalid request: instrument: 'ES2!' is not supported; only the front month (ES1!) is" },
    });
    expect(await refused('GET', '/v1/api/accounts/Nobody/position?instrument=ES%2009-25')).toEqual({ status: 404, body: NOBODY });
  });
});

describe('anything else', () => {
  it('an unknown route or a wrong method is a 404 with did_you_mean (§6.1)', async () => {
    expect(await refused('GET', '/v1/api/nothing?x=1')).toEqual({
      status: 404,
      body: { success: false, error: 'not_found', detail: 'No route GET /v1/api/nothing', did_you_mean: [] },
    });
    expect(await refused('GET', '/v1/api/accounts/Sim101/ordrs')).toEqual({
      status: 404,
      body: {
        success: false,
        error: 'not_found',
        detail: 'No route GET /v1/api/accounts/Sim101/ordrs',
        did_you_mean: ['GET /v1/api/accounts/{account}/orders'],
      },
    });
    expect(await refused('POST', '/v1/api/positions', {})).toMatchObject({
      status: 404,
      body: { error: 'not_found', did_you_mean: ['GET /v1/api/positions'] },
    });
  });

  it('a path outside /v1/api is a 404 that says what is served, never a redirect', async () => {
    expect(await refused('GET', '/api/v1/positions')).toEqual({
      status: 404,
      body: { success: false, error: 'not_found', detail: 'trade serve only serves /v1/api/... and /ws/stream' },
    });
  });

  it('a trailing slash is ignored (§1.1)', async () => {
    expect((await server.get('/v1/api/positions/')).status).toBe(200);
  });

  it('the catalog lists every route it serves (§1.7)', async () => {
    const reply = await server.get('/v1/api/_endpoints');
    expect(reply.status).toBe(200);
    const { endpoints } = reply.body as { endpoints: string[] };
    expect(endpoints).toContain('POST /v1/api/accounts/{account}/orders/place');
    expect(endpoints).toContain('GET /v1/api/accounts/{account}/positions');
    expect(endpoints).toContain('GET /v1/api/_endpoints');
  });

  it('a URL that does not decode is a 400 {error}', async () => {
    expect(await refused('GET', '/v1/api/accounts/%E0%A4%A/orders')).toEqual({
      status: 400,
      body: { error: 'Invalid request: the URL is not valid' },
    });
  });

  it('an internal failure is a 500 with a generic message; the operator sees the cause', async () => {
    server.engine.close(); // a real failure: the store is gone under the server
    const reply = await server.post(PLACE, ES_MARKET);
    expect(reply).toMatchObject({ status: 500, body: INTERNAL_ERROR_BODY });
    expect(server.warnings).toEqual([
      'trade serve: internal error in PlaceOrder: The database connection is not open',
    ]);
    // The server is still up and answering.
    expect((await server.get('/v1/api/nothing')).status).toBe(404);
  });
});
