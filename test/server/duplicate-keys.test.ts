/**
 * `trade serve` refuses JSON with a key given twice (service-reference.md §1.3; JSON.parse would
 * keep the last): over HTTP a 400 naming the key, over WebSocket the reply or event a client
 * waits for, naming it too; and nothing is executed: the store is as it was.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, ES_MARKET, type Harness, type RpcClient, startServer } from './harness.js';

let server: Harness;
let client: RpcClient;
beforeAll(async () => {
  server = await startServer();
  client = await connect(server.wsUrl);
});
afterAll(async () => {
  await client.close();
  await server.close();
});

const PLACE = '/v1/api/accounts/Sim101/orders/place';
/** An order as JSON text with `extra` spliced in after its first field: `"action":"BUY",<extra>,…`. */
const orderText = (extra: string) => JSON.stringify(ES_MARKET).replace('"BUY",', `"BUY",${extra},`);

describe('trade serve over HTTP', () => {
  it.each([
    ['a top-level key', orderText('"action":"SELL"'), "Invalid request: body: duplicate key 'action'"],
    ['the same key written with an escape', orderText('"\\u0061ction":"SELL"'), "Invalid request: body: duplicate key 'action'"],
    ['a nested key, named by its path', orderText('"bracket":{"stopLoss":1,"stopLoss":2}'), "Invalid request: body: duplicate key 'bracket.stopLoss'"],
    [
      'two keys, each named',
      orderText('"quantity":5,"action":"SELL"'),
      "Invalid request: body: duplicate key 'action'; body: duplicate key 'quantity'",
    ],
  ])('refuses %s with 400 and places nothing', async (_, body, error) => {
    const before = server.snapshot();
    const reply = await server.http('POST', PLACE, { body });
    expect({ status: reply.status, body: reply.body }).toEqual({ status: 400, body: { error } });
    expect(server.snapshot()).toEqual(before);
  });

  it('still takes the same body without the duplicate, and equal keys in different objects', async () => {
    const reply = await server.http('POST', PLACE, { body: orderText('"tags":[{"k":1},{"k":2}]') });
    expect(reply).toMatchObject({ status: 200, body: { success: true } });
  });
});

describe('trade serve over WebSocket', () => {
  const rpc = (id: string, extra: string) => `{"action":"rpc","id":"${id}","api":"PlaceOrder","args":${orderText(extra).replace('{', '{"account":"Sim101",')}}`;

  it('answers an rpc with a duplicate key {id, data: {error}} naming its path, and executes nothing', async () => {
    const before = server.snapshot();
    client.send(rpc('w1', '"action":"SELL"'));
    expect(await client.next()).toEqual({ id: 'w1', data: { error: "Invalid request: message: duplicate key 'args.action'" } });
    // A doubled id names no request: the refusal goes to null, as for a missing id (§5.2).
    client.send(rpc('w2', '"quantity":2').replace('"id":"w2"', '"id":"w2","id":"w3"'));
    expect(await client.next()).toEqual({
      id: null,
      data: { error: "Invalid request: message: duplicate key 'id'; message: duplicate key 'args.quantity'" },
    });
    // A doubled action may have meant an rpc: refused too, so its sender is not left waiting.
    client.send('{"action":"rpc","id":"w4","api":"ListAccounts","action":"ping"}');
    expect(await client.next()).toEqual({ id: 'w4', data: { error: "Invalid request: message: duplicate key 'action'" } });
    expect(server.snapshot()).toEqual(before);
  });

  it('answers a stream action with a duplicate key with the stream error event, and subscribes to nothing', async () => {
    // Priced first: a subscription that took would send its marketData at once (§5.4).
    server.engine.setPrice('ES 09-25', 6000);
    server.engine.setPrice('NQ 12-25', 20000);
    client.send('{"action":"subscribe","instruments":["ES 09-25"],"instruments":["NQ 12-25"]}');
    expect(await client.next()).toEqual({ type: 'error', action: 'subscribe', error: "Invalid request: message: duplicate key 'instruments'" });
    // Nothing more comes for it: the ping after it is answered next, and no marketData follows.
    client.send({ action: 'ping' });
    expect(await client.next()).toEqual({ type: 'pong' });
    const reply = await client.call('after', 'ListAccounts', {});
    expect(reply).toMatchObject({ id: 'after', data: { success: true } });
    expect(client.messages.filter((m) => (m as { type?: string }).type === 'marketData')).toEqual([]);
    expect(server.logs.some((l) => l.includes("WS refused 400: Invalid request: message: duplicate key 'instruments'"))).toBe(true);
  });
});
