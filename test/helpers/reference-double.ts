/**
 * A test double of the order service, written from docs/service-reference.md alone: it imports
 * nothing from src/, so the http and ws backends are tested against what the service documents,
 * not against `trade serve` (which shares their code and so their mistakes).
 *
 * It is the service, not the simulator: refusals carry the service's generic
 * `{"error": "Invalid request"}` (§6.2), ids are 32 hex digits (§1.6), replies use NinjaTrader
 * spellings (§1.5), positions carry an unsigned quantity and `marketPosition` (§4.2), and the
 * WebSocket answers an RPC with exactly `{id, data}` and a ping with nothing (§5.3, §5.4).
 *
 * Options make it answer the ways the reference says a client must accept: success bodies inside
 * the AI docs' `{"success": true, "data": ...}` (§1.7), only the fields the documented examples
 * show (`minimal`), lists as bare arrays (§3.15, §3.16), a disconnected platform (408, §6.1) and
 * the budget of §7.1 (429, no Retry-After: the service documents none).
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';

export interface DoubleOptions {
  token?: string;
  /** NT8 account names (§1.4: matched in any case, echoed canonically). */
  accounts?: string[];
  /** Last price per `SYMBOL MM-YY`: MARKET orders fill at it (§8.1). */
  prices?: Record<string, number>;
  /** §7.1's token bucket, one for HTTP and WebSocket RPCs together. */
  rateLimit?: { perSecond: number; burst: number };
  /** `data`: success bodies as `{"success": true, "data": {...}}` (§1.7). */
  envelope?: 'flat' | 'data';
  /** Objects with only the fields documented examples show; no `success` where they have none; bare lists where §3 allows. */
  minimal?: boolean;
  /** NT8 not connected: every API request answers 408 (§6.1). */
  disconnected?: boolean;
}

export interface RecordedRequest {
  transport: 'http' | 'ws';
  api: string;
  args: Record<string, unknown>;
  /** The HTTP status answered (over WebSocket: the one the reply stands for). */
  status: number;
}

export interface ReferenceDouble {
  url: string;
  wsUrl: string;
  token: string;
  requests: RecordedRequest[];
  setPrice(instrument: string, price: number): void;
  close(): Promise<void>;
}

type Body = Record<string, unknown> | unknown[];
class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
  ) {
    super(JSON.stringify(body));
  }
}
const invalid = () => new Refusal(400, { error: 'Invalid request' });

interface Order {
  account: string;
  orderId: string;
  instrument: string;
  action: 'Buy' | 'Sell';
  type: 'Market' | 'Limit' | 'StopMarket' | 'StopLimit';
  tif: 'Day' | 'Gtc';
  quantity: number;
  limit: number;
  stop: number;
  state: 'Working' | 'Filled' | 'Cancelled';
  fillPrice: number;
  oco: string;
  time: string;
}

/** §1.5: any case, spaces, `_` and `-` ignored. */
function enumOf<T extends string>(value: unknown, allowed: readonly T[]): T {
  const key = typeof value === 'string' ? value.replace(/[\s_-]/g, '').toLowerCase() : '';
  const found = allowed.find((a) => a.toLowerCase() === key);
  if (!found) throw invalid();
  return found;
}

const POINT_VALUE: Record<string, number> = { ES: 50, MES: 5, NQ: 20, MNQ: 2 };

/** The operations of §2 this double serves: route, WebSocket names. */
const ROUTES: Array<{ api: string; ws: string[]; method: string; path: RegExp; params: string[] }> = [
  { api: 'PlaceOrder', ws: ['PlaceOrder'], method: 'POST', path: /^\/accounts\/([^/]+)\/orders\/place$/, params: ['account'] },
  { api: 'ReversePosition', ws: ['ReversePosition'], method: 'POST', path: /^\/accounts\/([^/]+)\/positions\/reverseposition$/, params: ['account'] },
  { api: 'CancelOrders', ws: ['CancelOrders'], method: 'POST', path: /^\/accounts\/([^/]+)\/orders\/cancel$/, params: ['account'] },
  { api: 'Cancel', ws: ['Cancel', 'CancelOrder'], method: 'POST', path: /^\/accounts\/([^/]+)\/orders\/([^/]+)\/cancel$/, params: ['account', 'orderId'] },
  { api: 'ClosePosition', ws: ['ClosePosition'], method: 'POST', path: /^\/accounts\/([^/]+)\/positions\/close$/, params: ['account'] },
  { api: 'GetOrderStatus', ws: ['GetOrderStatus'], method: 'GET', path: /^\/accounts\/([^/]+)\/orders\/([^/]+)\/status$/, params: ['account', 'orderId'] },
  { api: 'GetOrders', ws: ['GetOrders', 'ListOrders'], method: 'GET', path: /^\/accounts\/([^/]+)\/orders$/, params: ['account'] },
  { api: 'GetOrder', ws: ['GetOrder'], method: 'GET', path: /^\/accounts\/([^/]+)\/orders\/([^/]+)$/, params: ['account', 'orderId'] },
  { api: 'GetPosition', ws: ['GetPosition'], method: 'GET', path: /^\/accounts\/([^/]+)\/position$/, params: ['account'] },
  { api: 'GetPositions', ws: ['GetPositions', 'ListPositions'], method: 'GET', path: /^\/accounts\/([^/]+)\/positions$/, params: ['account'] },
  { api: 'GetAllPositions', ws: ['GetAllPositions'], method: 'GET', path: /^\/positions$/, params: [] },
  { api: 'ListAccounts', ws: ['ListAccounts'], method: 'GET', path: /^\/accounts$/, params: [] },
];

export async function startReferenceDouble(options: DoubleOptions = {}): Promise<ReferenceDouble> {
  const token = options.token ?? 'double-token-5b1f0c';
  const accounts = options.accounts ?? ['Sim101'];
  const prices = new Map(Object.entries(options.prices ?? {}));
  const orders: Order[] = [];
  /** Signed size and average price per `account|instrument` that ever had a fill. */
  const positions = new Map<string, { quantity: number; average: number }>();
  const requests: RecordedRequest[] = [];
  let tokens = options.rateLimit?.burst ?? 0;
  let refilled = Date.now();

  function canonical(name: unknown): string {
    const found = accounts.find((a) => typeof name === 'string' && a.toLowerCase() === name.toLowerCase());
    if (!found) throw new Refusal(404, { success: false, error: 'invalid_account', detail: `Account ${String(name)} not found` });
    return found;
  }

  function instrumentOf(value: unknown): string {
    if (typeof value !== 'string' || !/^[A-Z0-9]+ \d\d-\d\d$/.test(value)) throw invalid();
    return value;
  }

  const positionOf = (account: string, instrument: string) => positions.get(`${account}|${instrument}`) ?? { quantity: 0, average: 0 };

  /** §8.2: netting, the average of adds, a reversal opening at the fill price. */
  function fill(order: Order, price: number): void {
    order.state = 'Filled';
    order.fillPrice = price;
    const key = `${order.account}|${order.instrument}`;
    const before = positionOf(order.account, order.instrument);
    const signed = order.action === 'Buy' ? order.quantity : -order.quantity;
    const quantity = before.quantity + signed;
    let average = before.average;
    if (before.quantity === 0 || Math.sign(quantity) !== Math.sign(before.quantity)) average = price;
    else if (Math.sign(signed) === Math.sign(before.quantity))
      average = (before.average * Math.abs(before.quantity) + price * order.quantity) / Math.abs(quantity);
    positions.set(key, { quantity, average: quantity === 0 ? 0 : average });
    if (order.oco) for (const o of orders) if (o !== order && o.oco === order.oco && o.account === order.account && o.state === 'Working') o.state = 'Cancelled';
  }

  function marketable(order: Order, last: number): boolean {
    if (order.type === 'Limit') return order.action === 'Buy' ? last <= order.limit : last >= order.limit;
    if (order.type === 'StopMarket') return order.action === 'Buy' ? last >= order.stop : last <= order.stop;
    return false;
  }

  function place(account: string, args: Record<string, unknown>): Order {
    const instrument = instrumentOf(args.instrument);
    const type = enumOf(args.orderType, ['Market', 'Limit', 'StopMarket', 'StopLimit'] as const);
    const quantity = args.quantity;
    if (typeof quantity !== 'number' || !Number.isInteger(quantity) || quantity < 1) throw invalid();
    const limit = typeof args.limitPrice === 'number' ? args.limitPrice : 0;
    const stop = typeof args.stopPrice === 'number' ? args.stopPrice : 0;
    if ((type === 'Limit' || type === 'StopLimit') && !(limit > 0)) throw invalid();
    if ((type === 'StopMarket' || type === 'StopLimit') && !(stop > 0)) throw invalid();
    if (args.orderId !== undefined && orders.some((o) => o.account === account && o.orderId === args.orderId))
      throw new Refusal(400, { error: `Invalid request: orderId: '${String(args.orderId)}' is already used in account '${account}'` });
    const last = prices.get(instrument);
    if (type === 'Market' && last === undefined) throw invalid();
    const order: Order = {
      account,
      orderId: typeof args.orderId === 'string' ? args.orderId : randomBytes(16).toString('hex'),
      instrument,
      action: enumOf(args.action, ['Buy', 'Sell'] as const),
      type,
      tif: enumOf(args.timeInForce, ['Day', 'Gtc'] as const),
      quantity,
      limit: type === 'Limit' || type === 'StopLimit' ? limit : 0,
      stop: type === 'StopMarket' || type === 'StopLimit' ? stop : 0,
      state: 'Working',
      fillPrice: 0,
      oco: typeof args.ocoId === 'string' ? args.ocoId : '',
      time: new Date().toISOString().replace('Z', '0000'),
    };
    orders.push(order);
    if (type === 'Market') fill(order, last!);
    else if (type === 'Limit' && last !== undefined && marketable(order, last)) fill(order, last);
    return order;
  }

  function cancelWorking(account: string, instrument?: string): string[] {
    const cancelled = orders.filter((o) => o.account === account && o.state === 'Working' && (instrument === undefined || o.instrument === instrument));
    for (const o of cancelled) o.state = 'Cancelled';
    return cancelled.map((o) => o.orderId);
  }

  /** Closes (part of) a position at market (§3.10); the position as it was, `quantity` = closed. */
  function close(account: string, instrument: string, part?: number): Record<string, unknown> {
    const position = positionOf(account, instrument);
    const size = Math.min(Math.abs(position.quantity), part ?? Math.abs(position.quantity));
    const before = positionObject(account, instrument);
    if (size === Math.abs(position.quantity)) cancelWorking(account, instrument);
    const closing: Order = {
      account, orderId: randomBytes(16).toString('hex'), instrument, action: position.quantity > 0 ? 'Sell' : 'Buy', type: 'Market', tif: 'Day',
      quantity: size, limit: 0, stop: 0, state: 'Working', fillPrice: 0, oco: '', time: new Date().toISOString().replace('Z', '0000'),
    };
    orders.push(closing);
    fill(closing, prices.get(instrument) ?? position.average);
    return { ...before, quantity: size };
  }

  function orderObject(o: Order): Record<string, unknown> {
    const documented = {
      account: o.account, orderId: o.orderId, instrument: o.instrument, instrumentType: 'Future', orderType: o.type, orderState: o.state,
      quantity: o.quantity, averageFillPrice: o.fillPrice, filled: o.state === 'Filled' ? o.quantity : 0, fromEntrySignal: null,
      gtd: '2099-12-01T00:00:00.0000000', hasOverfill: false, isBacktestOrder: false, limitPrice: o.limit, limitPriceChanged: 0,
    };
    if (options.minimal) return documented;
    return {
      ...documented, id: o.orderId, name: '', oco: o.oco, ocoId: o.oco, orderAction: o.action, ownerStrategy: null, stopPrice: o.stop,
      stopPriceChanged: 0, time: o.time, timeInForce: o.tif,
    };
  }

  function positionObject(account: string, instrument: string): Record<string, unknown> {
    const { quantity, average } = positionOf(account, instrument);
    const market = prices.get(instrument) ?? 0;
    const point = POINT_VALUE[instrument.split(' ')[0]!] ?? 1;
    return {
      type: 'NinjaTrader.Cbi.Position', account, instrument, instrumentType: 'Future',
      marketPosition: quantity > 0 ? 'Long' : quantity < 0 ? 'Short' : 'Flat',
      quantity: Math.abs(quantity), averagePrice: average, marketPrice: market,
      unrealizedProfitLoss: quantity === 0 ? 0 : (market - average) * quantity * point,
      ...(options.minimal ? {} : { tag: null }),
    };
  }

  function positionList(account: string | undefined, includeFlat: boolean): Array<Record<string, unknown>> {
    return [...positions.entries()]
      .filter(([key, p]) => (account === undefined || key.startsWith(`${account}|`)) && (includeFlat || p.quantity !== 0))
      .map(([key]) => positionObject(...(key.split('|') as [string, string])));
  }

  const findOrder = (account: string, id: unknown) => orders.find((o) => o.account === account && o.orderId === id);
  const flag = (value: unknown) => value === true || (typeof value === 'string' && ['true', '1'].includes(value.toLowerCase()));

  /** One operation with its flat args: the success body, or a Refusal. */
  function run(api: string, args: Record<string, unknown>): Body {
    const account = () => canonical(args.account);
    switch (api) {
      case 'PlaceOrder':
        return { orderId: place(account(), args).orderId, success: true };
      case 'ReversePosition': {
        const name = account();
        const instrument = instrumentOf(args.instrument);
        if (positionOf(name, instrument).quantity === 0)
          throw new Refusal(400, { error: `No position found for instrument '${instrument}' in account '${String(args.account)}'` });
        close(name, instrument);
        return { orderId: place(name, args).orderId, success: true };
      }
      case 'Cancel': {
        const order = findOrder(account(), args.orderId);
        if (!order || order.state !== 'Working') throw new Refusal(400, { error: `Order linked to '${String(args.orderId)}' not found or already terminal.` });
        order.state = 'Cancelled';
        return { orderId: order.orderId, success: true };
      }
      case 'CancelOrders':
        return { orderIds: cancelWorking(account(), args.instrument === undefined ? undefined : instrumentOf(args.instrument)), success: true };
      case 'ClosePosition': {
        const name = account();
        const instrument = instrumentOf(args.instrument);
        if (positionOf(name, instrument).quantity === 0) throw new Refusal(400, { error: `No positions found for instrument '${instrument}'` });
        const quantity = typeof args.quantity === 'number' ? args.quantity : undefined;
        const percent = typeof args.percent === 'number' ? args.percent : undefined;
        const size = Math.abs(positionOf(name, instrument).quantity);
        return { closedPositions: [close(name, instrument, quantity ?? (percent === undefined ? undefined : Math.ceil(percent * size - 1e-9)))], success: true };
      }
      case 'GetOrder': {
        const order = findOrder(account(), args.orderId);
        if (!order) throw invalid();
        return options.minimal ? orderObject(order) : { ...orderObject(order), success: true };
      }
      case 'GetOrderStatus': {
        const order = findOrder(account(), args.orderId);
        if (!order) throw invalid();
        return { status: order.state, success: true };
      }
      case 'GetOrders': {
        const name = account();
        const list = orders.filter((o) => o.account === name && (!flag(args.activeOnly) || o.state === 'Working')).map(orderObject);
        return options.minimal ? { orders: list } : { orders: list, count: list.length, success: true };
      }
      case 'GetPosition':
        return options.minimal ? positionObject(account(), instrumentOf(args.instrument)) : { ...positionObject(account(), instrumentOf(args.instrument)), success: true };
      case 'GetPositions': {
        const list = positionList(account(), flag(args.includeFlat));
        return options.minimal ? list : { positions: list, count: list.length, success: true };
      }
      case 'GetAllPositions': {
        const list = positionList(undefined, flag(args.includeFlat));
        return { positions: list, count: list.length, success: true };
      }
      case 'ListAccounts':
        return options.minimal ? accounts.map((name) => ({ name })) : { accounts: accounts.map((name) => ({ name })), count: accounts.length, success: true };
      default:
        throw new Refusal(400, { error: `Unknown API command '${api}'` });
    }
  }

  /** §7.1: a bucket of `burst`, refilled at `perSecond`. */
  function limited(): boolean {
    if (!options.rateLimit) return false;
    const now = Date.now();
    tokens = Math.min(options.rateLimit.burst, tokens + ((now - refilled) / 1000) * options.rateLimit.perSecond);
    refilled = now;
    if (tokens < 1) return true;
    tokens -= 1;
    return false;
  }

  /** The answer to one request, as status and body; success bodies shaped by the options. */
  function answer(api: string, args: Record<string, unknown>, transport: 'http' | 'ws'): { status: number; body: unknown } {
    let result: { status: number; body: unknown };
    if (limited()) result = { status: 429, body: { error: 'Rate limit exceeded' } };
    else if (options.disconnected) result = { status: 408, body: { success: false, error: 'NinjaTrader is not connected' } };
    else {
      try {
        const body = run(api, args);
        result = { status: 200, body: options.envelope === 'data' && !Array.isArray(body) ? envelope(body) : body };
      } catch (error) {
        if (!(error instanceof Refusal)) throw error;
        result = { status: error.status, body: error.body };
      }
    }
    requests.push({ transport, api, args, status: result.status });
    return result;
  }

  const envelope = (body: Record<string, unknown>) => {
    const { success: _success, ...data } = body;
    return { success: true, data };
  };

  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk));
    req.on('end', () => {
      if (req.headers.authorization !== `Bearer ${token}`) return send(res, 401, { error: 'Unauthorized' });
      const url = new URL(req.url!, 'http://double');
      const path = url.pathname.replace(/^\/v1\/api/, '');
      if (!url.pathname.startsWith('/v1/api/')) return send(res, 404, { success: false, error: 'not_found', detail: 'not an API path' });
      const route = ROUTES.find((r) => r.method === req.method && r.path.test(path));
      if (!route)
        return send(res, 404, { success: false, error: 'not_found', detail: `No route ${req.method} ${url.pathname}`, did_you_mean: [] });
      let body: Record<string, unknown> = {};
      try {
        if (text.trim() !== '') body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        return send(res, 400, { error: 'Invalid request' });
      }
      const args: Record<string, unknown> = { ...Object.fromEntries(url.searchParams), ...body };
      const match = route.path.exec(path)!;
      route.params.forEach((name, i) => (args[name] = decodeURIComponent(match[i + 1]!)));
      const { status, body: reply } = answer(route.api, args, 'http');
      send(res, status, reply);
    });
  });

  const streams = createDoubleStreams({ prices, accounts, positionList }); // streams: see the region at the end
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    if (req.url !== '/ws/stream' || req.headers.authorization !== `Bearer ${token}`) {
      socket.end('HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n{"error":"Unauthorized"}');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws: WebSocket) => {
      ws.on('message', (raw, binary) => {
        let message: { action?: unknown; id?: unknown; api?: unknown; args?: unknown };
        try {
          message = binary ? {} : (JSON.parse(raw.toString()) as typeof message);
        } catch {
          return; // §5.4: malformed input gets no reply
        }
        if (message?.action !== 'rpc') return streams.handle(ws, message ?? {}); // a ping gets nothing: the service documents no pong
        const api = typeof message.api === 'string' ? message.api : '';
        const route = ROUTES.find((r) => r.ws.includes(api));
        const args = (message.args ?? {}) as Record<string, unknown>;
        const { body } = route ? answer(route.api, args, 'ws') : { body: { error: `Unknown API command '${api}'` } };
        ws.send(JSON.stringify({ id: message.id ?? null, data: body }));
      });
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    wsUrl: `${url.replace('http', 'ws')}/ws/stream`,
    token,
    requests,
    setPrice(instrument, price) {
      prices.set(instrument, price);
      for (const o of orders) if (o.instrument === instrument && o.state === 'Working' && marketable(o, price)) fill(o, o.type === 'Limit' ? o.limit : price);
      streams.priceChanged(instrument);
    },
    async close() {
      streams.close();
      for (const client of wss.clients) client.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Streams (§4.4, §4.7, §5.2–§5.4), in a region of their own: `subscribe`/`unsubscribe` →
// `marketData` (the quotes of the priced instruments at once, then one per price set), and
// `streamPnl` → `pnlUpdate` (at once, then every `interval` ms). What the reference marks as
// the server's alone is left out: no pong, no stream `error` event (an instrument the double
// cannot read is skipped; when none is left nothing is sent), no subscription budget. Quotes
// are live-looking: a bid a tick under the last and an ask a tick over it, so a client that
// assumes bid = ask = last (the simulator's) is caught.

interface DoubleStreamDeps {
  prices: Map<string, number>;
  accounts: string[];
  positionList(account: string | undefined, includeFlat: boolean): Array<Record<string, unknown>>;
}

const TICK: Record<string, { tick: number; point: number; name: string }> = {
  ES: { tick: 0.25, point: 50, name: 'E-mini S&P 500 Futures' },
  MES: { tick: 0.25, point: 5, name: 'Micro E-mini S&P 500 Futures' },
  NQ: { tick: 0.25, point: 20, name: 'E-mini Nasdaq-100 Futures' },
  MNQ: { tick: 0.25, point: 2, name: 'Micro E-mini Nasdaq-100 Futures' },
};

function createDoubleStreams(deps: DoubleStreamDeps) {
  const subscribed = new Map<WebSocket, Set<string>>();
  const pnlTimers = new Map<WebSocket, NodeJS.Timeout>();
  const known = new WeakSet<WebSocket>();
  const emit = (ws: WebSocket, event: Record<string, unknown>) => {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(event));
  };

  /** §4.4's Quote, as the example of §12 shows it, for a priced instrument. */
  function quote(instrument: string): Record<string, unknown> | undefined {
    const last = deps.prices.get(instrument);
    if (last === undefined) return undefined;
    const [root, month] = instrument.split(' ') as [string, string];
    const spec = TICK[root] ?? { tick: 0.01, point: 1, name: root };
    const now = new Date();
    return {
      description: spec.name, type: 'Future', tickSize: spec.tick, pointValue: spec.point, tickValue: spec.tick * spec.point,
      exchange: 'Globex', expiration: `20${month.slice(3)}-${month.slice(0, 2)}-01`, tradingHours: 'CME US Index Futures ETH',
      instrument, bid: last - spec.tick, ask: last + spec.tick, last, open: last, high: last, low: last, close: last, volume: 0,
      quoteTime: now.toISOString(), quoteTimeUtc: now.toISOString().slice(0, 19).replace('T', ' '), epoch: Math.floor(now.getTime() / 1000),
      dataSource: { status: 'Live', connectedFeeds: ['Live'] }, isMarketOpen: true,
    };
  }

  /** §4.7's pnlUpdate: every account, its open positions, cash as if no trade had closed. */
  function pnlUpdate(): Record<string, unknown> {
    const accounts = deps.accounts.map((account) => {
      const positions = deps.positionList(account, false);
      const unrealized = positions.reduce((sum, p) => sum + (p.unrealizedProfitLoss as number), 0);
      return { account, realizedProfitLoss: 0, unrealizedProfitLoss: unrealized, cashValue: 100_000, netLiquidation: 100_000 + unrealized, positions };
    });
    return { type: 'pnlUpdate', epoch: Date.now(), accounts };
  }

  function release(ws: WebSocket): void {
    subscribed.delete(ws);
    clearInterval(pnlTimers.get(ws));
    pnlTimers.delete(ws);
  }

  const dated = (value: unknown): value is string => typeof value === 'string' && /^[A-Z0-9]+ \d\d-\d\d$/.test(value);

  return {
    handle(ws: WebSocket, message: Record<string, unknown>): void {
      if (!known.has(ws)) ws.once('close', () => release(ws));
      known.add(ws);
      const instruments = Array.isArray(message.instruments) ? message.instruments.filter(dated) : [];
      const mine = subscribed.get(ws) ?? new Set<string>();
      if (message.action === 'subscribe' && instruments.length > 0) {
        for (const i of instruments) mine.add(i);
        subscribed.set(ws, mine);
        emit(ws, { type: 'marketData', quotes: instruments.map(quote).filter(Boolean) });
      } else if (message.action === 'unsubscribe') {
        for (const i of instruments) mine.delete(i);
      } else if (message.action === 'streamPnl') {
        clearInterval(pnlTimers.get(ws));
        pnlTimers.delete(ws);
        if (message.enabled !== true) return;
        emit(ws, pnlUpdate());
        const interval = typeof message.interval === 'number' && message.interval >= 250 ? message.interval : 1000;
        pnlTimers.set(ws, setInterval(() => emit(ws, pnlUpdate()), interval));
      }
    },
    priceChanged(instrument: string): void {
      for (const [ws, instruments] of subscribed) if (instruments.has(instrument)) emit(ws, { type: 'marketData', quotes: [quote(instrument)] });
    },
    close(): void {
      for (const ws of [...subscribed.keys(), ...pnlTimers.keys()]) release(ws);
    },
  };
}
