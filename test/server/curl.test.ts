/**
 * The service document's examples as a plain client sends them: the exact bytes `curl -X POST
 * -H ... -d '...'` writes (upper-case enums over HTTP), and the WebSocket RPC message with the
 * document's mixed-case enums.
 */
import { connect as tcpConnect } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connect, startServer, TOKEN, type Harness } from './harness.js';

let server: Harness;
beforeEach(async () => {
  server = await startServer();
});
afterEach(() => server.close());

/** `curl -s -X POST <url> -H "Content-Type: application/json" -H "Authorization: Bearer …" -d '<body>'`, byte for byte. */
function curl(method: string, path: string, body?: string, token = TOKEN): Promise<{ status: number; body: unknown }> {
  const { host } = new URL(server.url);
  const lines = [
    `${method} ${path} HTTP/1.1`,
    `Host: ${host}`,
    'User-Agent: curl/8.5.0',
    'Accept: */*',
    `Authorization: Bearer ${token}`,
  ];
  if (body !== undefined) lines.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`);
  const raw = `${lines.join('\r\n')}\r\n\r\n${body ?? ''}`;
  return new Promise((resolve, reject) => {
    const socket = tcpConnect(Number(new URL(server.url).port), '127.0.0.1', () => socket.end(raw));
    let response = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (response += chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head, payload] = response.split('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head!)![1]), body: JSON.parse(payload!) });
    });
  });
}

const ORDER_ID = expect.stringMatching(/^[0-9a-f]{32}$/);

describe("the service document's examples", () => {
  it('4.1 Place Order over HTTP, upper-case enums', async () => {
    const body = '{"instrument": "ES 09-25", "action": "BUY", "quantity": 1, "orderType": "MARKET", "timeInForce": "DAY"}';
    expect(await curl('POST', '/v1/api/accounts/Sim101/orders/place', body)).toEqual({
      status: 200,
      body: { orderId: ORDER_ID, success: true },
    });
  });

  it('4.1 with every optional field: a stop-limit order in an OCO group with an ATM strategy', async () => {
    server.engine.addAtmTemplate({ name: 'ATM Strategy 1', stopLossTicks: 8, profitTargetTicks: 16, tickSize: 0.25 });
    const body = JSON.stringify({
      instrument: 'NQ 12-25',
      action: 'SELL',
      quantity: 2,
      orderType: 'STOPLIMIT',
      timeInForce: 'GTC',
      limitPrice: 21000.25,
      stopPrice: 21010.5,
      ocoId: 'oco-1',
      strategy: 'ATM Strategy 1',
    });
    expect(await curl('POST', '/v1/api/accounts/Sim101/orders/place', body)).toMatchObject({ status: 200 });
    expect(server.engine.listOrders()).toEqual([
      expect.objectContaining({ orderType: 'STOPLIMIT', limitPrice: 21000.25, stopPrice: 21010.5, state: 'WORKING' }),
    ]);
  });

  it('4.2 Reverse Position over HTTP: 400 word for word without a position, 200 with one', async () => {
    const body = '{"instrument": "ES 09-25", "action": "SELL", "quantity": 1, "orderType": "MARKET", "timeInForce": "DAY"}';
    const path = '/v1/api/accounts/Sim101/positions/reverseposition';
    expect(await curl('POST', path, body)).toEqual({
      status: 400,
      body: { error: "No position found for instrument 'ES 09-25' in account 'Sim101'" },
    });
    expect(server.engine.listOrders()).toEqual([]);
    await curl('POST', '/v1/api/accounts/Sim101/orders/place', body.replace('SELL', 'BUY'));
    expect(await curl('POST', path, body)).toEqual({ status: 200, body: { orderId: ORDER_ID, success: true } });
    expect(server.engine.getPosition('Sim101', 'ES 09-25')?.quantity).toBe(-1);
  });

  it('7 an invalid Place Order is a 400 that starts with the generic invalid-request text', async () => {
    const reply = await curl('POST', '/v1/api/accounts/Sim101/orders/place', '{"instrument": "ES 09-25"}');
    expect(reply.status).toBe(400);
    expect((reply.body as { error: string }).error).toMatch(/^Invalid request: /);
  });

  it('5 a request without the right token is a 401', async () => {
    expect(await curl('GET', '/v1/api/positions', undefined, 'not-the-token')).toEqual({
      status: 401,
      body: { error: 'Unauthorized' },
    });
  });

  it('4.3 the WebSocket RPC form, with mixed-case enums', async () => {
    // Below the example's sell limit, so that it works rather than fills.
    server.engine.setPrice('ES 09-25', 4400);
    const client = await connect(server.wsUrl);
    client.send(
      '{"action": "rpc", "id": "<request_id>", "api": "PlaceOrder", "args": {"account": "Sim101", "instrument": "ES 09-25", "action": "Buy", "quantity": 1, "orderType": "Market", "timeInForce": "Gtc"}}',
    );
    expect(await client.next()).toEqual({ id: '<request_id>', data: { orderId: ORDER_ID, success: true } });
    client.send(
      '{"action": "rpc", "id": "2", "api": "ReversePosition", "args": {"account": "Sim101", "instrument": "ES 09-25", "action": "Sell", "quantity": 1, "orderType": "Limit", "limitPrice": 4500.25, "timeInForce": "Day"}}',
    );
    expect(await client.next()).toEqual({ id: '2', data: { orderId: ORDER_ID, success: true } });
    expect(server.engine.listOrders().map((o) => [o.action, o.orderType, o.timeInForce, o.state])).toEqual([
      ['BUY', 'MARKET', 'GTC', 'FILLED'],
      ['SELL', 'MARKET', 'DAY', 'FILLED'],
      ['SELL', 'LIMIT', 'DAY', 'WORKING'],
    ]);
    await client.close();
  });
});
