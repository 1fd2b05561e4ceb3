/** The WebSocket RPC at /ws/stream over a real socket: replies by id, bad messages, the store after each. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AUTH, connect, ES_MARKET, rawHttp, refusedUpgrade, startServer, TOKEN, type Harness, type RpcClient } from './harness.js';

const ORDER_ID = expect.stringMatching(/^[0-9a-f]{32}$/);
const ES = { account: 'Sim101', ...ES_MARKET };

let server: Harness;
let client: RpcClient;
beforeEach(async () => {
  server = await startServer();
  client = await connect(server.wsUrl);
});
afterEach(async () => {
  await client.close();
  await server.close();
});

describe('WebSocket RPC', () => {
  it('answers {action:"ping"} with {type:"pong"}', async () => {
    client.send({ action: 'ping' });
    expect(await client.next()).toEqual({ type: 'pong' });
  });

  it('PlaceOrder with NinjaTrader spellings: exactly {id, data:{orderId, success:true}}, no status', async () => {
    const reply = await client.call('req-1', 'PlaceOrder', { ...ES, action: 'Buy', orderType: 'Market', timeInForce: 'Gtc' });
    expect(reply).toEqual({ id: 'req-1', data: { orderId: ORDER_ID, success: true } });
    expect(Object.keys(reply)).toEqual(['id', 'data']);
    expect(server.engine.listOrders()).toEqual([
      expect.objectContaining({ id: (reply.data as { orderId: string }).orderId, action: 'BUY', timeInForce: 'GTC' }),
    ]);
  });

  it('echoes a numeric id unchanged', async () => {
    client.send({ action: 'rpc', id: 42, api: 'GetAllPositions', args: {} });
    expect(await client.next()).toEqual({ id: 42, data: { positions: [], count: 0, success: true } });
  });

  it('ReversePosition closes the position and places the new order', async () => {
    await client.call('1', 'PlaceOrder', { ...ES, quantity: 2 });
    const reply = await client.call('2', 'ReversePosition', { ...ES, action: 'Sell', quantity: 2 });
    expect(reply).toEqual({ id: '2', data: { orderId: ORDER_ID, success: true } });
    expect(server.engine.getPosition('Sim101', 'ES 09-25')?.quantity).toBe(-2);
  });

  it('data is exactly the HTTP body for the same request, refusals included', async () => {
    const cases: Array<[string, string, Record<string, unknown>]> = [
      ['PlaceOrder', '/v1/api/accounts/Sim101/orders/place', { ...ES_MARKET, quantity: -1, orderType: 'Stop' }],
      ['PlaceOrder', '/v1/api/accounts/Nobody/orders/place', ES_MARKET],
      ['ReversePosition', '/v1/api/accounts/Sim101/positions/reverseposition', ES_MARKET],
    ];
    for (const [api, path, body] of cases) {
      const account = path.split('/')[4];
      const before = server.snapshot();
      const overHttp = await server.post(path, body);
      const overWs = await client.call(`${api}-${account}`, api, { account, ...body });
      expect(overWs).toEqual({ id: `${api}-${account}`, data: overHttp.body });
      expect(overHttp.status).toBeGreaterThanOrEqual(400);
      expect(server.snapshot()).toEqual(before);
    }
  });

  it('answers the read operations, aliases included', async () => {
    await client.call('p', 'PlaceOrder', ES);
    const orders = (await client.call('o', 'GetOrders', { account: 'sim101' })).data as { orders: Array<{ orderState: string }>; count: number };
    expect(orders).toMatchObject({ count: 1, success: true, orders: [{ orderState: 'Filled', orderAction: 'Buy', account: 'Sim101' }] });
    expect((await client.call('lo', 'ListOrders', { account: 'Sim101' })).data).toEqual(orders);
    expect((await client.call('ps', 'GetAllPositions', { includeFlat: false })).data).toMatchObject({
      positions: [{ marketPosition: 'Long', quantity: 1 }],
      count: 1,
    });
    expect((await client.call('lp', 'ListPositions', { account: 'Sim101' })).data).toMatchObject({ count: 1 });
    expect((await client.call('one', 'GetPosition', { account: 'Sim101', instrument: 'es 09-25' })).data).toMatchObject({
      type: 'NinjaTrader.Cbi.Position',
      instrument: 'ES 09-25',
      marketPosition: 'Long',
      quantity: 1,
      success: true,
    });
  });

  it("an unknown api is the add-on's 'Unknown API command' (§5.3)", async () => {
    expect(await client.call('x', 'CancelEverything', ES)).toEqual({ id: 'x', data: { error: "Unknown API command 'CancelEverything'" } });
  });

  it('missing args or a missing account are refusals that name the fields', async () => {
    expect(await client.call('a', 'PlaceOrder')).toEqual({
      id: 'a',
      data: {
        error:
          'Invalid request: account: is required; instrument: is required; action: is required; quantity: is required; orderType: is required; timeInForce: is required',
      },
    });
    expect(await client.call('b', 'ReversePosition', ES_MARKET)).toEqual({ id: 'b', data: { error: 'Invalid request: account: is required' } });
  });

  it('malformed messages get no reply; an rpc with a bad api or args gets one; the connection stays open (§5.4)', async () => {
    const before = server.snapshot();
    const ignored: unknown[] = ['not json', '[1,2]', '"rpc"', { id: 'm1' }, { action: 'call', id: 'm2', api: 'PlaceOrder', args: ES }];
    const answered: unknown[] = [
      { action: 'rpc', id: 'm3', args: ES },
      { action: 'rpc', id: 'm4', api: 7, args: ES },
      { action: 'rpc', id: 'm5', api: 'PlaceOrder', args: [ES] },
      { action: 'rpc', id: 6, api: 'PlaceOrder', args: 'Sim101' },
      { action: 'rpc', api: 'GetAllPositions' },
      { action: 'rpc', id: { nested: true }, api: 'GetAllPositions' },
    ];
    for (const message of [...ignored, ...answered]) client.send(message);
    client.socket.send(Buffer.from('{"action":"ping"}'), { binary: true });
    client.send({ action: 'ping' });
    expect(await client.waitFor(answered.length + 1)).toEqual([
      { id: 'm3', data: { error: 'Invalid request: api: is required' } },
      { id: 'm4', data: { error: 'Invalid request: api: must be a string, got 7' } },
      { id: 'm5', data: { error: 'Invalid request: args: must be an object' } },
      { id: 6, data: { error: 'Invalid request: args: must be an object' } },
      { id: null, data: { positions: [], count: 0, success: true } },
      { id: null, data: { positions: [], count: 0, success: true } },
      { type: 'pong' },
    ]);
    expect(server.snapshot()).toEqual(before);
    expect(client.socket.readyState).toBe(client.socket.OPEN);
    const ignoredLines = server.logs.filter((line) => line.includes('WS ignored'));
    expect(ignoredLines).toHaveLength(ignored.length + 1);
  });

  it('an id or api with a newline or an escape cannot forge or colour a --log line', async () => {
    const forged = 'x\n2025-01-01T00:00:00.000Z 127.0.0.1 POST /v1/api/accounts/Sim101/orders/place 200 1.0ms';
    expect((await client.call(forged, 'GetAllPositions')).data).toMatchObject({ success: true });
    expect((await client.call('y', '\u001b[31mNope\u2028')).data).toEqual({ error: "Unknown API command '\\u001b[31mNope\\u2028'" });
    const lines = server.logs.filter((line) => line.includes(' WS ') && !line.includes('ignored'));
    expect(lines.map((line) => line.replace(/^\S+ /, '').replace(/ [\d.]+ms$/, ''))).toEqual([
      "127.0.0.1 WS GetAllPositions id='x\\u000a2025-01-01T00:00:00.000Z 127.0.0.1... 200",
      "127.0.0.1 WS '\\u001b[31mNope\\u2028' id='y' 404",
    ]);
  });

  it('a frame over 64 KiB closes the connection with 1009 (§5.1)', async () => {
    client.send(JSON.stringify({ action: 'rpc', id: 'big', api: 'PlaceOrder', args: { ...ES, strategy: 'x'.repeat(70_000) } }));
    expect((await client.closed).code).toBe(1009);
    expect(server.engine.listOrders()).toEqual([]);
    client = await connect(server.wsUrl);
    expect((await client.call('after', 'PlaceOrder', ES)).data).toMatchObject({ success: true });
  });

  it('pipelined RPCs on one socket each get exactly one reply, matched by id', async () => {
    const sent = Array.from({ length: 60 }, (_, i) => {
      const kind = i % 3;
      const args = kind === 0 ? ES : kind === 1 ? { ...ES, quantity: 0 } : { ...ES, account: 'Nobody' };
      return { id: `p${i}`, kind, args };
    });
    for (const { id, args } of sent) client.send({ action: 'rpc', id, api: 'PlaceOrder', args });
    const replies = (await client.waitFor(sent.length)) as Array<{ id: string; data: { orderId?: string; success?: boolean; error?: string } }>;
    // Give a stray duplicate reply the chance to arrive before counting.
    client.send({ action: 'ping' });
    await client.waitFor(sent.length + 1);
    expect(client.messages.at(-1)).toEqual({ type: 'pong' });
    expect(replies.slice(0, sent.length).map((r) => r.id).sort()).toEqual(sent.map((s) => s.id).sort());
    for (const { id, kind } of sent) {
      const reply = replies.find((r) => r.id === id)!;
      expect([reply.data.success === true, /^Invalid request/.test(reply.data.error ?? ''), reply.data.error === 'invalid_account'][kind]).toBe(true);
    }
    const placed = replies.slice(0, sent.length).filter((r) => r.data.success === true).map((r) => r.data.orderId!);
    expect(server.engine.listOrders().map((o) => o.id).sort()).toEqual(placed.sort());
    expect(placed).toHaveLength(20);
  });

  it('several connections work at once on one store', async () => {
    const others = await Promise.all([connect(server.wsUrl), connect(server.wsUrl)]);
    const replies = await Promise.all(others.map((c, i) => c.call(`c${i}`, 'PlaceOrder', ES)));
    expect(replies.map((r) => (r.data as { success: boolean }).success)).toEqual([true, true]);
    await Promise.all(others.map((c) => c.close()));
    expect(server.engine.getPosition('Sim101', 'ES 09-25')?.quantity).toBe(2);
  });

  it('closes clients with 1001 when the server shuts down', async () => {
    await client.call('before', 'PlaceOrder', ES);
    await server.close();
    expect(await client.closed).toEqual({ code: 1001, reason: 'Server shutting down' });
    server = await startServer(); // for afterEach
  });
});

describe('WebSocket upgrade', () => {
  it('is refused with 401 {error} without the token or with a wrong one', async () => {
    expect(await refusedUpgrade(server.wsUrl, {})).toEqual({ status: 401, body: { error: 'Unauthorized' } });
    expect(await refusedUpgrade(server.wsUrl, { authorization: `Bearer ${TOKEN}x` })).toEqual({ status: 401, body: { error: 'Unauthorized' } });
    expect(await refusedUpgrade(`${server.wsUrl}?token=${TOKEN}`, {})).toEqual({ status: 401, body: { error: 'Unauthorized' } });
  });

  it('is refused with 404 on another path', async () => {
    expect(await refusedUpgrade(server.wsUrl.replace('/ws/stream', '/ws/other'), AUTH)).toEqual({
      status: 404,
      body: { success: false, error: 'not_found', detail: 'trade serve only serves /v1/api/... and /ws/stream' },
    });
  });

  // Found by test/server/fuzz-ws.test.ts: ws answered these in text/html, and any route upgraded.
  it('a malformed upgrade is a 400 or 405 {error} in JSON that says what is wrong (an h2c offer on the stream: 426), and the socket closes', async () => {
    const key = 'dGhlIHNhbXBsZSBub25jZQ==';
    const upgrade = (lines: string[], method = 'GET', path = '/ws/stream') =>
      rawHttp(server.url, `${method} ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nConnection: Upgrade\r\n${lines.join('\r\n')}\r\n\r\n`);
    const cases: Array<[Promise<string>, number, string]> = [
      [upgrade(['Upgrade: websocket', 'Sec-WebSocket-Version: 13']), 400, 'Invalid WebSocket upgrade: Missing or invalid Sec-WebSocket-Key header'],
      [upgrade(['Upgrade: websocket', `Sec-WebSocket-Key: ${key}`, 'Sec-WebSocket-Version: 7']), 400, 'Invalid WebSocket upgrade: Missing or invalid Sec-WebSocket-Version header'],
      // An upgrade to anything but websocket is no upgrade at all (§1.3): a plain GET of the stream.
      [upgrade(['Upgrade: h2c', `Sec-WebSocket-Key: ${key}`, 'Sec-WebSocket-Version: 13']), 426, '/ws/stream takes WebSocket connections only'],
      [upgrade(['Upgrade: websocket', `Sec-WebSocket-Key: ${key}`, 'Sec-WebSocket-Version: 13', 'Sec-WebSocket-Protocol: , ,']), 400, 'Invalid WebSocket upgrade: Invalid Sec-WebSocket-Protocol header'],
      [upgrade(['Upgrade: websocket', `Sec-WebSocket-Key: ${key}`, 'Sec-WebSocket-Version: 13'], 'GET', '/v1/api/positions'), 400, 'Invalid request: only /ws/stream takes WebSocket upgrades'],
      [upgrade(['Upgrade: websocket', `Sec-WebSocket-Key: ${key}`, 'Sec-WebSocket-Version: 13', 'Content-Type: application/json', 'Content-Length: 2', '', '{}'], 'POST', '/v1/api/accounts/Sim101/orders/place'), 400, 'Invalid request: only /ws/stream takes WebSocket upgrades'],
    ];
    const before = server.snapshot();
    for (const [reply, status, error] of cases) {
      const text = await reply;
      expect(text).toMatch(new RegExp(`^HTTP/1.1 ${status} `));
      expect(text).toMatch(/\r\ncontent-type: application\/json; charset=utf-8\r\n/i);
      expect(text).toMatch(/\r\nconnection: close\r\n/i);
      expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))).toEqual({ error });
    }
    expect(server.snapshot()).toEqual(before);
  });

  it('a plain GET of /ws/stream is a 426 {error}', async () => {
    expect(await server.get('/ws/stream')).toMatchObject({
      status: 426,
      body: { error: '/ws/stream takes WebSocket connections only' },
    });
  });
});
