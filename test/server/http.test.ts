/** The REST routes over a real socket: statuses, exact bodies, and the store after each request. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ES_MARKET, startServer, type Harness } from './harness.js';

const PLACE = '/v1/api/accounts/Sim101/orders/place';
const REVERSE = '/v1/api/accounts/Sim101/positions/reverseposition';
const ORDER_ID = expect.stringMatching(/^[0-9a-f]{32}$/);

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
    expect(await refused('POST', PLACE, { ...ES_MARKET, account: 'Sim101' })).toEqual({
      status: 400,
      body: { error: 'Invalid request: account: is not a known field' },
    });
    expect(await refused('POST', PLACE, { instrument: 'ES 09-25' })).toEqual({
      status: 400,
      body: {
        error:
          'Invalid request: action: is required; quantity: is required; orderType: is required; timeInForce: is required',
      },
    });
  });

  it('names a bad account of the path together with the bad body fields', async () => {
    const long = 'A'.repeat(65);
    expect(await refused('POST', `/v1/api/accounts/${long}/orders/place`, { ...ES_MARKET, quantity: 1.5 })).toEqual({
      status: 400,
      body: { error: 'Invalid request: account: must be at most 64 characters; quantity: must be a whole number, got 1.5' },
    });
  });

  it('answers 404 for an unknown account, and stores nothing', async () => {
    expect(await refused('POST', '/v1/api/accounts/Nobody/orders/place', ES_MARKET)).toEqual({
      status: 404,
      body: { error: "Account 'Nobody' not found" },
    });
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
    expect(await refused('POST', '/v1/api/accounts/Nobody/positions/reverseposition', ES_MARKET)).toEqual({
      status: 404,
      body: { error: "Account 'Nobody' not found" },
    });
  });
});

describe('read routes', () => {
  it('GET /v1/api/accounts/{account}/orders lists the orders, oldest first', async () => {
    const first = (await server.post(PLACE, ES_MARKET)).body as { orderId: string };
    const second = (await server.post(PLACE, { ...ES_MARKET, instrument: 'NQ 12-25' })).body as { orderId: string };
    const reply = await server.get('/v1/api/accounts/SIM101/orders');
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ orders: server.engine.listOrders(), success: true });
    expect((reply.body as { orders: Array<{ id: string }> }).orders.map((o) => o.id)).toEqual([first.orderId, second.orderId]);
    const filtered = await server.get('/v1/api/accounts/Sim101/orders?instrument=nq%2012-25');
    expect((filtered.body as { orders: Array<{ id: string }> }).orders.map((o) => o.id)).toEqual([second.orderId]);
  });

  it('GET /v1/api/accounts/{account}/orders refuses unknown accounts and filters', async () => {
    expect(await refused('GET', '/v1/api/accounts/Nobody/orders')).toEqual({
      status: 404,
      body: { error: "Account 'Nobody' not found" },
    });
    expect(await refused('GET', '/v1/api/accounts/Sim101/orders?instrumnet=ES%2009-25')).toEqual({
      status: 400,
      body: { error: 'Invalid request: instrumnet: is not a known field' },
    });
  });

  it('GET /v1/api/positions lists the open positions of every account', async () => {
    server.engine.addAccount('Sim102');
    await server.post(PLACE, ES_MARKET);
    await server.post('/v1/api/accounts/Sim102/orders/place', { ...ES_MARKET, action: 'SELL', quantity: 3 });
    const reply = await server.get('/v1/api/positions');
    expect(reply).toEqual({
      status: 200,
      headers: expect.anything(),
      body: {
        positions: [
          { account: 'Sim101', instrument: 'ES 09-25', quantity: 1, avgPrice: null, realizedPnl: 0 },
          { account: 'Sim102', instrument: 'ES 09-25', quantity: -3, avgPrice: null, realizedPnl: 0 },
        ],
        success: true,
      },
    });
    const one = await server.get('/v1/api/positions?account=sim102');
    expect((one.body as { positions: unknown[] }).positions).toEqual([expect.objectContaining({ account: 'Sim102' })]);
  });

  it('GET /v1/api/accounts/{account}/position?instrument= answers the position, flat when none', async () => {
    await server.post(PLACE, { ...ES_MARKET, quantity: 2 });
    expect((await server.get('/v1/api/accounts/Sim101/position?instrument=ES%2009-25')).body).toEqual({
      position: { account: 'Sim101', instrument: 'ES 09-25', quantity: 2, avgPrice: null, realizedPnl: 0 },
      success: true,
    });
    expect((await server.get('/v1/api/accounts/sim101/position?instrument=cl%2001-26')).body).toEqual({
      position: { account: 'Sim101', instrument: 'CL 01-26', quantity: 0, avgPrice: null, realizedPnl: 0 },
      success: true,
    });
  });

  it('GET position needs a valid instrument and a known account', async () => {
    expect(await refused('GET', '/v1/api/accounts/Sim101/position')).toEqual({
      status: 400,
      body: { error: 'Invalid request: instrument: is required' },
    });
    expect(await refused('GET', '/v1/api/accounts/Sim101/position?instrument=ES')).toEqual({
      status: 400,
      body: { error: "Invalid request: instrument: must be <SYMBOL> <MM-YY> (e.g. 'ES 09-25'), got 'ES'" },
    });
    expect(await refused('GET', '/v1/api/accounts/Nobody/position?instrument=ES%2009-25')).toEqual({
      status: 404,
      body: { error: "Account 'Nobody' not found" },
    });
  });
});

describe('anything else', () => {
  it('an unknown route or a wrong method is a 404 {error}', async () => {
    expect(await refused('GET', '/v1/api/nothing?x=1')).toEqual({
      status: 404,
      body: { error: 'Route GET /v1/api/nothing not found' },
    });
    expect(await refused('GET', '/v1/api/accounts/Sim101/orders/place')).toEqual({
      status: 404,
      body: { error: 'Route GET /v1/api/accounts/Sim101/orders/place not found' },
    });
    expect(await refused('POST', '/v1/api/positions', {})).toEqual({
      status: 404,
      body: { error: 'Route POST /v1/api/positions not found' },
    });
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
    expect(reply).toMatchObject({ status: 500, body: { error: 'Internal server error' } });
    expect(server.warnings).toEqual([
      'trade serve: internal error in PlaceOrder: The database connection is not open',
    ]);
    // The server is still up and answering.
    expect((await server.get('/v1/api/nothing')).status).toBe(404);
  });
});
