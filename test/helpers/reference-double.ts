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
 * show (`minimal`), lists as bare arrays (§3.15, §3.16), a disconnected platform (408, §6.1),
 * the budget of §7.1 (429, no Retry-After: the service documents none) and a platform that takes
 * a request and never answers (`stall`: the client's timeout). `configure` changes them between
 * tests, `reset` empties the state, so one double can serve a whole describe block.
 *
 * It serves every operation of §2 but one: GetMarketInfo, whose reply the reference does not
 * capture (§3.18), is not served (404 over HTTP, "Unknown API command" over WebSocket), as a
 * service without that route would answer. GetOrderLifecycle answers the shape the reference
 * gives for the MCP tool of the same name (§3.9), since the REST page's reply is not captured.
 * Where the reference documents only the generic `Invalid request` (Change, Replace, unknown
 * ids, bad fields), that is what the double answers; where it states a message (§6.2), that one.
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
  /** NT8 not connected: every API request answers 408 (§6.1), except those CrossTrade serves itself (GetWatermarks, §3.16). */
  disconnected?: boolean;
  /** NT8 takes every API request and never answers: recorded (status 0), nothing executed, no reply. */
  stall?: boolean;
  /**
   * Success bodies as a typed serialiser writes them (System.Text.Json, Jackson): every property
   * the reply type declares is present, those without a value as `null` (`"error": null`,
   * `"warning": null`, an order's `"ocoId": null`), which §1.3 makes the same as absent.
   */
  nulls?: boolean;
  /**
   * The webhook's answer to a message it accepts (webhook-reference.md §1.3: not documented; the
   * observed one is a 2xx, its body text). A 5xx stands for a service that failed on the way.
   */
  webhookAnswer?: { status: number; body: string };
}

/** The shapes a client must accept (§1.7): flat bodies, the data envelope, documented fields only. */
export const SHAPES: Array<[string, DoubleOptions]> = [
  ['flat bodies', {}],
  ['the {success, data} envelope', { envelope: 'data' }],
  ['only documented fields, bare lists', { minimal: true }],
  ['unset fields as null', { nulls: true }],
];

/** What `configure` may change while the double runs. */
export type DoubleSettings = Partial<Pick<DoubleOptions, 'envelope' | 'minimal' | 'disconnected' | 'rateLimit' | 'stall' | 'nulls' | 'webhookAnswer'>>;

/** One message the webhook received (webhook-reference.md §1.1): its text and content type as sent. */
export interface WebhookMessage {
  status: number;
  contentType?: string;
  authorization?: string;
  text: string;
}

export interface RecordedRequest {
  transport: 'http' | 'ws';
  api: string;
  args: Record<string, unknown>;
  /** The HTTP status answered (over WebSocket: the one the reply stands for); 0 when it never answered. */
  status: number;
  /** The WebSocket `api` as the client sent it (`Flatten`, `CancelOrder`, ...); absent over HTTP. */
  wsName?: string;
}

export interface ReferenceDouble {
  url: string;
  wsUrl: string;
  token: string;
  requests: RecordedRequest[];
  /** The webhook's URL (§1.1: `/v1/send/{webhookId}/{webhookSecret}`); its key is `token`. */
  webhookUrl: string;
  webhookMessages: WebhookMessage[];
  setPrice(instrument: string, price: number): void;
  /** Answers differently from now on (the other options stay as they were). */
  configure(settings: DoubleSettings): void;
  /** Back to the start: no orders, executions, positions or strategies, the start prices, no requests. */
  reset(): void;
  /** The ATM strategy instance an entry order started: its id, which minimal Orders do not show. */
  strategyOf(orderId: string): string | undefined;
  /** Time passes for what the double recorded: its executions happened `ms` earlier, so GetExecutions' lookback (at most 900 s, §3.19) forgets them as the service does. */
  elapse(ms: number): void;
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
  /** The id NT8 knows the order by now: a Change may give it a new one (§3.6, the documented example). */
  orderId: string;
  /** Every id the order was known by; each stays valid for lookup and cancel (§1.6). */
  ids: string[];
  instrument: string;
  action: 'Buy' | 'Sell';
  type: 'Market' | 'Limit' | 'StopMarket' | 'StopLimit';
  tif: 'Day' | 'Gtc';
  quantity: number;
  limit: number;
  stop: number;
  limitChanged: number;
  stopChanged: number;
  state: 'Working' | 'Filled' | 'Cancelled';
  fillPrice: number;
  oco: string;
  time: string;
  name: string;
  /** The ATM strategy instance this order belongs to, and its template. */
  strategy?: { id: string; template: string };
  /** For GetOrderLifecycle: what happened to it, when. */
  events: Array<{ at: number; event: string }>;
}

interface Execution {
  id: string;
  at: number;
  order: Order;
  price: number;
  quantity: number;
  /** The position's signed size after the fill. */
  after: number;
  isEntry: boolean;
  isExit: boolean;
}

/** §1.3: a field whose value is `null` is absent (typed clients write unset fields as null). */
const present = (args: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.entries(args).filter(([, value]) => value !== null));

/** §1.5: any case, spaces, `_` and `-` ignored. */
function enumOf<T extends string>(value: unknown, allowed: readonly T[]): T {
  const key = typeof value === 'string' ? value.replace(/[\s_-]/g, '').toLowerCase() : '';
  const found = allowed.find((a) => a.toLowerCase() === key);
  if (!found) throw invalid();
  return found;
}

/** A whole number ≥ min: a JSON number, or the digits of a query-string value. */
function wholeNumber(value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max) throw invalid();
  return n;
}

/** A price: a positive number, or 0 / absent for "none" (§3.1, §3.6). */
function priceOf(value: unknown): number {
  if (value === undefined || value === null || value === 0) return 0;
  if (typeof value !== 'number' || !(value > 0)) throw invalid();
  return value;
}

/** Contract facts the double needs (§10), for the instruments tests use. */
const SPECS: Record<string, { name: string; tick: number; point: number }> = {
  ES: { name: 'E-mini S&P 500', tick: 0.25, point: 50 },
  MES: { name: 'Micro E-mini S&P 500', tick: 0.25, point: 5 },
  NQ: { name: 'E-mini Nasdaq-100', tick: 0.25, point: 20 },
  MNQ: { name: 'Micro E-mini Nasdaq-100', tick: 0.25, point: 2 },
};
const specOf = (instrument: string) => SPECS[instrument.split(' ')[0]!] ?? { name: instrument, tick: 0.01, point: 1 };

const ORDER_TYPES = ['Market', 'Limit', 'StopMarket', 'StopLimit'] as const;
const PERIOD_TYPES = ['minute', 'day', 'week', 'month', 'year', 'tick', 'second', 'range', 'renko'] as const;
const BAR_MS: Record<string, number> = { second: 1_000, minute: 60_000, day: 86_400_000, week: 604_800_000 };
const STARTING_CASH = 100_000;

/** The operations of §2 this double serves: route, WebSocket names (§2, §3.14's Flatten rule in `rpcOperation`). */
const ROUTES: Array<{ api: string; ws: string[]; method: string; path: RegExp; params: string[] }> = [
  { api: 'PlaceOrder', ws: ['PlaceOrder'], method: 'POST', path: /^\/accounts\/([^/]+)\/orders\/place$/, params: ['account'] },
  { api: 'FlatPlace', ws: ['FlatPlace'], method: 'POST', path: /^\/accounts\/([^/]+)\/orders\/flatplace$/, params: ['account'] },
  { api: 'ReversePosition', ws: ['ReversePosition'], method: 'POST', path: /^\/accounts\/([^/]+)\/positions\/reverseposition$/, params: ['account'] },
  { api: 'Reverse', ws: ['Reverse'], method: 'POST', path: /^\/accounts\/([^/]+)\/positions\/reverse$/, params: ['account'] },
  { api: 'CancelOrders', ws: ['CancelOrders'], method: 'POST', path: /^\/accounts\/([^/]+)\/orders\/cancel$/, params: ['account'] },
  { api: 'CancelAndBracket', ws: ['CancelAndBracket'], method: 'POST', path: /^\/accounts\/([^/]+)\/orders\/cancel_and_bracket$/, params: ['account'] },
  { api: 'CancelAllOrders', ws: ['CancelAllOrders'], method: 'POST', path: /^\/orders\/cancelall$/, params: [] },
  { api: 'Cancel', ws: ['Cancel', 'CancelOrder'], method: 'POST', path: /^\/accounts\/([^/]+)\/orders\/([^/]+)\/cancel$/, params: ['account', 'orderId'] },
  { api: 'Change', ws: ['Change'], method: 'PUT', path: /^\/accounts\/([^/]+)\/orders\/([^/]+)\/change$/, params: ['account', 'orderId'] },
  { api: 'Replace', ws: ['Replace', 'CancelReplace'], method: 'POST', path: /^\/accounts\/([^/]+)\/orders\/([^/]+)\/replace$/, params: ['account', 'orderId'] },
  { api: 'ClosePosition', ws: ['ClosePosition'], method: 'POST', path: /^\/accounts\/([^/]+)\/positions\/close$/, params: ['account'] },
  { api: 'Flatten', ws: [], method: 'POST', path: /^\/accounts\/([^/]+)\/positions\/flatten$/, params: ['account'] },
  { api: 'FlattenEverything', ws: [], method: 'POST', path: /^\/positions\/flatten$/, params: [] },
  { api: 'CloseStrategy', ws: ['CloseStrategy'], method: 'POST', path: /^\/accounts\/([^/]+)\/strategies\/([^/]+)\/close$/, params: ['account', 'strategyId'] },
  { api: 'GetOrderStatus', ws: ['GetOrderStatus'], method: 'GET', path: /^\/accounts\/([^/]+)\/orders\/([^/]+)\/status$/, params: ['account', 'orderId'] },
  { api: 'GetOrderLifecycle', ws: ['GetOrderLifecycle'], method: 'GET', path: /^\/accounts\/([^/]+)\/orders\/([^/]+)\/lifecycle$/, params: ['account', 'orderId'] },
  { api: 'GetOrders', ws: ['GetOrders', 'ListOrders'], method: 'GET', path: /^\/accounts\/([^/]+)\/orders$/, params: ['account'] },
  { api: 'GetOrder', ws: ['GetOrder'], method: 'GET', path: /^\/accounts\/([^/]+)\/orders\/([^/]+)$/, params: ['account', 'orderId'] },
  { api: 'GetPosition', ws: ['GetPosition'], method: 'GET', path: /^\/accounts\/([^/]+)\/position$/, params: ['account'] },
  { api: 'GetPositions', ws: ['GetPositions', 'ListPositions'], method: 'GET', path: /^\/accounts\/([^/]+)\/positions$/, params: ['account'] },
  { api: 'GetAllPositions', ws: ['GetAllPositions'], method: 'GET', path: /^\/positions$/, params: [] },
  { api: 'ListAccounts', ws: ['ListAccounts'], method: 'GET', path: /^\/accounts$/, params: [] },
  // The literal route wins over GET /accounts/{account} (§2's route precedence).
  { api: 'GetSnapshot', ws: ['GetSnapshot'], method: 'GET', path: /^\/accounts\/snapshot$/, params: [] },
  { api: 'GetAccount', ws: ['GetAccount'], method: 'GET', path: /^\/accounts\/([^/]+)$/, params: ['account'] },
  { api: 'GetWatermarks', ws: ['GetWatermarks'], method: 'GET', path: /^\/accounts\/([^/]+)\/watermarks$/, params: ['account'] },
  { api: 'GetQuote', ws: [], method: 'GET', path: /^\/market\/quote$/, params: [] },
  { api: 'GetQuoteLegacy', ws: [], method: 'GET', path: /^\/accounts\/([^/]+)\/quote$/, params: ['account'] },
  { api: 'GetBars', ws: ['GetBars'], method: 'POST', path: /^\/market\/bars$/, params: [] },
  { api: 'GetExecutions', ws: ['GetExecutions'], method: 'GET', path: /^\/accounts\/([^/]+)\/executions$/, params: ['account'] },
  { api: 'GetExecution', ws: ['GetExecution'], method: 'GET', path: /^\/accounts\/([^/]+)\/executions\/([^/]+)$/, params: ['account', 'executionId'] },
  { api: 'Catalog', ws: [], method: 'GET', path: /^\/_endpoints$/, params: [] },
];

/** §1.7: a route as the catalog lists it, `METHOD /v1/api/...` with `{name}` for each path parameter, read back from its pattern. */
function catalogEntry(r: (typeof ROUTES)[number]): string {
  let i = 0;
  return `${r.method} /v1/api${r.path.source.slice(1, -1).replace(/\\\//g, '/').replace(/\(\[\^\/\]\+\)/g, () => `{${r.params[i++]}}`)}`;
}

/** Levenshtein distance: the fewest one-character edits from `a` to `b`. */
function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length]!;
}

/**
 * §6.1 [doc A4]: a wrong path under /v1/api gets `did_you_mean`, "up to 3 catalog entries closest
 * to the path (empty when none)". Closest here: the same method and number of segments, a `{name}`
 * matching any segment, the others a few edits apart (3 at most in all).
 */
function didYouMean(method: string, path: string): string[] {
  const segments = path.split('/');
  return ROUTES.map((r) => {
    const entry = catalogEntry(r);
    const template = entry.slice(entry.indexOf(' ') + 1).split('/');
    if (r.method !== method || template.length !== segments.length) return { entry, edits: Infinity };
    return { entry, edits: template.reduce((sum, part, i) => sum + (/^\{\w+\}$/.test(part) ? 0 : distance(part, segments[i]!)), 0) };
  })
    .filter((c) => c.edits <= 3)
    .sort((x, y) => x.edits - y.edits)
    .slice(0, 3)
    .map((c) => c.entry);
}

/** The operations the double answers, by the names of §2 (`GetQuoteLegacy` for the legacy quote route). */
export const DOUBLE_OPERATIONS: readonly string[] = ROUTES.map((r) => r.api).filter((api) => api !== 'Catalog');

/** Answered by CrossTrade itself, not by the add-on in NT8: no 408 when NT8 is away (§3.16, §1.7). */
const WITHOUT_ADD_ON = new Set(['GetWatermarks', 'Catalog']);

/**
 * The operation an RPC stands for (§5.2: args are the route's path, query and body fields, flat),
 * or a refusal. §3.14: `Flatten` with an account and no side is the account's flatten, with a side
 * or without an account the filtered one; `FlattenEverything` is only for no filter at all.
 * §3.17: `GetQuote` with an account is the legacy route.
 */
function rpcOperation(api: string, args: Record<string, unknown>): string | Refusal | undefined {
  const filtered = ['account', 'instrument', 'marketPosition'].some((k) => args[k] !== undefined);
  if (api === 'FlattenEverything') return filtered ? invalid() : 'FlattenEverything';
  if (api === 'Flatten') {
    if (!filtered) return invalid();
    return args.account !== undefined && args.marketPosition === undefined ? 'Flatten' : 'FlattenEverything';
  }
  if (api === 'GetQuote') return args.account === undefined ? 'GetQuote' : 'GetQuoteLegacy';
  return ROUTES.find((r) => r.ws.includes(api))?.api;
}

export async function startReferenceDouble(options: DoubleOptions = {}): Promise<ReferenceDouble> {
  options = { ...options };
  const token = options.token ?? 'double-token-5b1f0c';
  const accounts = options.accounts ?? ['Sim101'];
  const startPrices = Object.entries(options.prices ?? {});
  const started = Date.now();
  const prices = new Map(startPrices);
  const orders: Order[] = [];
  /** Signed size and average price per `account|instrument` that ever had a fill. */
  const positions = new Map<string, { quantity: number; average: number }>();
  const executions: Execution[] = [];
  const realized = new Map<string, number>();
  /** ATM strategy instances by id (§3.20): the account, the entry, whether it was closed. */
  const strategies = new Map<string, { account: string; instrument: string; entry: Order; closed: boolean }>();
  /** Per account: the highs GetWatermarks reports (§3.16). */
  const highs = new Map<string, { pnlhigh: number; netliqhigh: number; unrealhigh: number }>();
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

  const hex = () => randomBytes(16).toString('hex');
  /** NT8's local time as the service writes it: `2025-09-26T18:09:38.3736787`. */
  const ntTime = (at: number) => new Date(at).toISOString().replace('Z', '0000');
  const positionOf = (account: string, instrument: string) => positions.get(`${account}|${instrument}`) ?? { quantity: 0, average: 0 };
  const sideOf = (quantity: number) => (quantity > 0 ? 'long' : quantity < 0 ? 'short' : 'flat');
  const openPositions = (account: string) => [...positions.entries()].filter(([key, p]) => key.startsWith(`${account}|`) && p.quantity !== 0);

  /** §8.2: netting, the average of adds, a reversal opening at the fill price; one Execution per fill (§4.5). */
  function fill(order: Order, price: number): void {
    order.state = 'Filled';
    order.fillPrice = price;
    order.events.push({ at: Date.now(), event: 'Filled' });
    const key = `${order.account}|${order.instrument}`;
    const before = positionOf(order.account, order.instrument);
    const signed = order.action === 'Buy' ? order.quantity : -order.quantity;
    const quantity = before.quantity + signed;
    let average = before.average;
    const reducing = before.quantity !== 0 && Math.sign(signed) !== Math.sign(before.quantity);
    if (reducing) {
      const closed = Math.min(Math.abs(before.quantity), order.quantity);
      const pnl = (price - before.average) * closed * specOf(order.instrument).point * Math.sign(before.quantity);
      realized.set(order.account, (realized.get(order.account) ?? 0) + pnl);
    }
    if (before.quantity === 0 || Math.sign(quantity) !== Math.sign(before.quantity)) average = price;
    else if (Math.sign(signed) === Math.sign(before.quantity))
      average = (before.average * Math.abs(before.quantity) + price * order.quantity) / Math.abs(quantity);
    positions.set(key, { quantity, average: quantity === 0 ? 0 : average });
    executions.push({
      id: hex(), at: Date.now(), order, price, quantity: order.quantity, after: quantity,
      isEntry: quantity !== 0 && (before.quantity === 0 || Math.sign(quantity) === Math.sign(signed)), isExit: reducing,
    });
    cancelGroup(order);
  }

  /** §8.3: when one order of an OCO group fills or is cancelled, the others are cancelled. */
  function cancelGroup(order: Order): void {
    if (!order.oco) return;
    for (const o of orders) if (o !== order && o.oco === order.oco && o.account === order.account && o.state === 'Working') cancelOne(o);
  }

  function cancelOne(order: Order): void {
    order.state = 'Cancelled';
    order.events.push({ at: Date.now(), event: 'Cancelled' });
    cancelGroup(order);
  }

  function marketable(order: Order, last: number): boolean {
    if (order.type === 'Limit') return order.action === 'Buy' ? last <= order.limit : last >= order.limit;
    if (order.type === 'StopMarket') return order.action === 'Buy' ? last >= order.stop : last <= order.stop;
    return false;
  }

  /** An order checked against PlaceOrder's rules (§3.1), not yet placed: nothing has changed when it throws. */
  function draft(account: string, args: Record<string, unknown>, ids: { clientId?: unknown } = { clientId: args.orderId }): Order {
    const instrument = instrumentOf(args.instrument);
    const type = enumOf(args.orderType, ORDER_TYPES);
    const action = enumOf(args.action, ['Buy', 'Sell'] as const);
    const tif = enumOf(args.timeInForce, ['Day', 'Gtc'] as const);
    const quantity = wholeNumber(args.quantity, 1);
    const limit = priceOf(args.limitPrice);
    const stop = priceOf(args.stopPrice);
    if ((type === 'Limit' || type === 'StopLimit') && !(limit > 0)) throw invalid();
    if ((type === 'StopMarket' || type === 'StopLimit') && !(stop > 0)) throw invalid();
    const last = prices.get(instrument);
    if (type === 'Market' && last === undefined) throw invalid();
    const { clientId } = ids;
    if (clientId !== undefined && (typeof clientId !== 'string' || clientId === '')) throw invalid();
    if (typeof clientId === 'string' && findOrder(account, clientId))
      throw new Refusal(400, { error: `Invalid request: orderId: '${clientId}' is already used in account '${account}'` });
    if (args.ocoId !== undefined && typeof args.ocoId !== 'string') throw invalid();
    if (args.strategy !== undefined && (typeof args.strategy !== 'string' || args.strategy === '')) throw invalid();
    const held = positionOf(account, instrument).quantity;
    if (args.requireMarketPosition !== undefined) {
      if (typeof args.requireMarketPosition !== 'string') throw invalid();
      const required = args.requireMarketPosition.split(',').map((s) => s.trim().toLowerCase());
      if (!required.every((s) => ['flat', 'long', 'short'].includes(s))) throw invalid();
      const side = sideOf(held);
      if (!required.includes(side))
        throw new Refusal(400, {
          error: `Market position requirement not met: ${instrument} in account '${account}' is ${side[0]!.toUpperCase()}${side.slice(1)}; required ${[...new Set(required)].join(', ')}`,
        });
    }
    if (args.maxPositions !== undefined) {
      const max = wholeNumber(args.maxPositions, 1);
      const open = openPositions(account).length;
      if (held === 0 && open >= max)
        throw new Refusal(400, { error: `Max positions reached: account '${account}' has ${open} open positions; maxPositions is ${max}` });
    }
    return newOrder({
      account, instrument, action, type, tif, quantity,
      orderId: typeof clientId === 'string' ? clientId : undefined,
      limit: type === 'Limit' || type === 'StopLimit' ? limit : 0,
      stop: type === 'StopMarket' || type === 'StopLimit' ? stop : 0,
      oco: typeof args.ocoId === 'string' ? args.ocoId : '',
      name: typeof args.strategy === 'string' ? 'Entry' : '',
      // NT8's strategy ids are numbers written as strings (§1.6: "334081723").
      strategy: typeof args.strategy === 'string' ? { id: String(100_000_000 + (randomBytes(4).readUInt32BE() % 900_000_000)), template: args.strategy } : undefined,
    });
  }

  function newOrder(o: Pick<Order, 'account' | 'instrument' | 'action' | 'type' | 'tif' | 'quantity'> & Partial<Order>): Order {
    const orderId = o.orderId ?? hex();
    return {
      limit: 0, stop: 0, oco: '', name: '', ...o, orderId, ids: [orderId], limitChanged: 0, stopChanged: 0, state: 'Working', fillPrice: 0,
      time: ntTime(Date.now()), events: [],
    };
  }

  /** Places a drafted order: a MARKET order, or a marketable LIMIT, fills at once at the last price (§8.1). */
  function submit(order: Order): Order {
    orders.push(order);
    order.events.push({ at: Date.now(), event: 'Submitted' }, { at: Date.now(), event: 'Working' });
    if (order.strategy) strategies.set(order.strategy.id, { account: order.account, instrument: order.instrument, entry: order, closed: false });
    const last = prices.get(order.instrument);
    if (order.type === 'Market') fill(order, last!);
    else if (order.type === 'Limit' && last !== undefined && marketable(order, last)) fill(order, last);
    return order;
  }

  const place = (account: string, args: Record<string, unknown>) => submit(draft(account, args));

  function market(account: string, instrument: string, action: 'Buy' | 'Sell', quantity: number, name = ''): Order {
    return submit(newOrder({ account, instrument, action, type: 'Market', tif: 'Day', quantity, name }));
  }

  function cancelWorking(filter: { account?: string; instrument?: string }): string[] {
    const matched = orders.filter(
      (o) => o.state === 'Working' && (filter.account === undefined || o.account === filter.account) && (filter.instrument === undefined || o.instrument === filter.instrument),
    );
    // An OCO sibling may already be cancelled with its group: it is one of those cancelled all the same.
    for (const o of matched) if (o.state === 'Working') cancelOne(o);
    return matched.map((o) => o.orderId);
  }

  /** Closes (part of) a position at market (§3.10); the position as it was, `quantity` = closed. */
  function close(account: string, instrument: string, part?: number): Record<string, unknown> {
    const position = positionOf(account, instrument);
    const size = Math.min(Math.abs(position.quantity), part ?? Math.abs(position.quantity));
    const before = positionObject(account, instrument);
    if (size === Math.abs(position.quantity)) cancelWorking({ account, instrument });
    const closing = newOrder({ account, instrument, action: position.quantity > 0 ? 'Sell' : 'Buy', type: 'Market', tif: 'Day', quantity: size, name: 'Close' });
    orders.push(closing);
    closing.events.push({ at: Date.now(), event: 'Submitted' });
    fill(closing, prices.get(instrument) ?? position.average);
    return { ...before, quantity: size };
  }

  function orderObject(o: Order): Record<string, unknown> {
    const documented = {
      account: o.account, orderId: o.orderId, instrument: o.instrument, instrumentType: 'Future', orderType: o.type, orderState: o.state,
      quantity: o.quantity, averageFillPrice: o.fillPrice, filled: o.state === 'Filled' ? o.quantity : 0, fromEntrySignal: null,
      gtd: '2099-12-01T00:00:00.0000000', hasOverfill: false, isBacktestOrder: false, limitPrice: o.limit, limitPriceChanged: o.limitChanged,
    };
    if (options.minimal) return documented;
    return {
      ...documented, id: o.orderId, name: o.name, oco: o.oco, ocoId: o.oco, orderAction: o.action,
      ownerStrategy: o.strategy ? { id: o.strategy.id, name: o.strategy.template, displayName: o.strategy.template } : null,
      stopPrice: o.stop, stopPriceChanged: o.stopChanged, time: o.time, timeInForce: o.tif,
    };
  }

  function positionObject(account: string, instrument: string): Record<string, unknown> {
    const { quantity, average } = positionOf(account, instrument);
    const market = prices.get(instrument) ?? 0;
    return {
      type: 'NinjaTrader.Cbi.Position', account, instrument, instrumentType: 'Future',
      marketPosition: quantity > 0 ? 'Long' : quantity < 0 ? 'Short' : 'Flat',
      quantity: Math.abs(quantity), averagePrice: average, marketPrice: market,
      unrealizedProfitLoss: quantity === 0 ? 0 : (market - average) * quantity * specOf(instrument).point,
      ...(options.minimal ? {} : { tag: null }),
    };
  }

  function positionList(account: string | undefined, includeFlat: boolean): Array<Record<string, unknown>> {
    return [...positions.entries()]
      .filter(([key, p]) => (account === undefined || key.startsWith(`${account}|`)) && (includeFlat || p.quantity !== 0))
      .map(([key]) => positionObject(...(key.split('|') as [string, string])));
  }

  function money(account: string) {
    const unrealized = openPositions(account).reduce((sum, [key]) => sum + (positionObject(account, key.split('|')[1]!).unrealizedProfitLoss as number), 0);
    const cash = STARTING_CASH + (realized.get(account) ?? 0);
    return { cash, unrealized, realized: realized.get(account) ?? 0, netLiquidation: cash + unrealized };
  }

  /** §4.3; the documented example's fields, `type` and `isAccountFlat` as the snapshot's copy has them. */
  function accountObject(name: string): Record<string, unknown> {
    const m = money(name);
    return {
      id: accounts.indexOf(name) + 1, name, displayName: name, primaryUser: null, provider: 'Simulator', denomination: 'UsDollar', status: 'Enabled',
      dailyLossLimit: 0, minCashValue: 0, maxOrderSize: 0, maxPositionSize: 0, connection: 'NinjaTrader.Cbi.Connection', connectionStatus: 'Connected',
      lastTransactionSum: 0,
      item: { buyingPower: 0, cashValue: m.cash, netLiquidation: m.netLiquidation, realizedProfitLoss: m.realized, unrealizedProfitLoss: m.unrealized },
      ...(options.minimal ? {} : { type: 'NinjaTrader.Cbi.Account', isAccountFlat: openPositions(name).length === 0 }),
    };
  }

  /** The add-on machine's time as quotes write it (§4.4): `03/18/2026 01:51:54 PM` (UTC here). */
  function usTime(at: number): string {
    const d = new Date(at);
    const two = (n: number) => String(n).padStart(2, '0');
    const hours = d.getUTCHours() % 12 || 12;
    return `${two(d.getUTCMonth() + 1)}/${two(d.getUTCDate())}/${d.getUTCFullYear()} ${two(hours)}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} ${d.getUTCHours() < 12 ? 'AM' : 'PM'}`;
  }

  /** §4.4 (market route); the legacy route's shorter object (§3.17, doc M2). */
  function quoteObject(instrument: string, legacy: boolean): Record<string, unknown> {
    const last = prices.get(instrument)!;
    const spec = specOf(instrument);
    const [month, year] = instrument.split(' ')[1]!.split('-') as [string, string];
    const traded = executions.filter((e) => e.order.instrument === instrument);
    const seen = [last, ...traded.map((e) => e.price)];
    const now = Date.now();
    const common = {
      instrument, description: `${spec.name} Futures`, type: 'Future', bid: last, ask: last, last, open: traded[0]?.price ?? last,
      high: Math.max(...seen), low: Math.min(...seen), close: last, volume: traded.reduce((n, e) => n + e.quantity, 0),
      tickSize: spec.tick, pointValue: spec.point, exchange: 'Globex', tradingHours: 'CME US Index Futures ETH',
      quoteTime: usTime(now),
    };
    if (legacy) return { ...common, expiration: `${Number(month)}/1/20${year} 12:00:00 AM` };
    return {
      ...common, tickValue: spec.tick * spec.point, expiration: `20${year}-${month}-01`, quoteTimeUtc: new Date(now).toISOString().slice(0, 19).replace('T', ' '),
      epoch: Math.floor(now / 1000),
      dataSource: { status: 'Live', connectedFeeds: ['Live'] }, isMarketOpen: true,
    };
  }

  function quotes(args: Record<string, unknown>, legacy: boolean): Body {
    if (typeof args.instrument !== 'string') throw invalid();
    const instruments = args.instrument.split(',').map((i) => instrumentOf(i.trim()));
    if (instruments.some((i) => !prices.has(i))) throw invalid();
    const list = instruments.map((i) => quoteObject(i, legacy));
    if (list.length > 1) return list;
    return legacy || !options.minimal ? { ...list[0]!, success: true } : list[0]!;
  }

  function executionObject(e: Execution): Record<string, unknown> {
    const documented = {
      id: e.id, type: 'NinjaTrader.Cbi.Execution', time: ntTime(e.at), epoch: e.at, name: e.isExit ? 'Exit' : 'Entry', orderId: e.order.orderId,
      account: e.order.account, serverName: 'DOUBLE-NT8', instrument: e.order.instrument, instrumentType: 'Future', position: Math.abs(e.after),
      marketPosition: e.order.action === 'Buy' ? 'Long' : 'Short', positionStrategy: 0, price: e.price, quantity: e.quantity,
    };
    return options.minimal ? documented : { ...documented, commission: 0, isEntry: e.isEntry, isExit: e.isExit };
  }

  /** §3.18: bars from what traded (every execution) and the start prices. */
  function bars(args: Record<string, unknown>): Body {
    const instrument = instrumentOf(args.instrument);
    const periodType = args.periodType === undefined ? 'minute' : enumOf(args.periodType, PERIOD_TYPES);
    const period = args.period === undefined ? 1 : wholeNumber(args.period, 1);
    const daysBack = args.daysBack === undefined ? 1 : wholeNumber(args.daysBack, 1);
    const limit = args.limit === undefined ? 5000 : wholeNumber(args.limit, 1);
    const time = (value: unknown, fallback: number) => {
      if (value === undefined) return fallback;
      const t = typeof value === 'string' ? Date.parse(value) : Number.NaN;
      if (Number.isNaN(t)) throw invalid();
      return t;
    };
    const to = time(args.to, Date.now());
    const from = time(args.from, to - daysBack * BAR_MS.day!);
    const ticks = [
      ...startPrices.filter(([i]) => i === instrument).map(([, price]) => ({ at: started, price, volume: 0 })),
      ...executions.filter((e) => e.order.instrument === instrument).map((e) => ({ at: e.at, price: e.price, volume: e.quantity })),
    ].filter((t) => t.at >= from && t.at <= to);
    const bucket = (at: number, i: number) => {
      if (periodType === 'month') return Date.UTC(new Date(at).getUTCFullYear(), new Date(at).getUTCMonth());
      if (periodType === 'year') return Date.UTC(new Date(at).getUTCFullYear(), 0);
      const ms = BAR_MS[periodType];
      // Tick, range and renko bars: `period` trades each, stamped with the first.
      return ms === undefined ? Math.floor(i / period) : Math.floor(at / (ms * period)) * ms * period;
    };
    const built = new Map<number, { epoch: number; open: number; high: number; low: number; close: number; volume: number }>();
    ticks.forEach((t, i) => {
      const key = bucket(t.at, i);
      const bar = built.get(key);
      if (!bar) built.set(key, { epoch: BAR_MS[periodType] === undefined && periodType !== 'month' && periodType !== 'year' ? t.at : key, open: t.price, high: t.price, low: t.price, close: t.price, volume: t.volume });
      else Object.assign(bar, { high: Math.max(bar.high, t.price), low: Math.min(bar.low, t.price), close: t.price, volume: bar.volume + t.volume });
    });
    const list = [...built.values()].slice(-limit).map(({ epoch, ...bar }) => ({ time: `${new Date(epoch).toISOString().slice(0, 19)}.0000000Z`, epoch, ...bar }));
    return { instrument, periodType, period, count: list.length, bars: list, ...(options.minimal ? {} : { success: true }) };
  }

  /** §3.14: positions meeting every filter closed; which orders are cancelled follows the reference's rule. */
  function flattenEverything(args: Record<string, unknown>): Body {
    const account = args.account === undefined ? undefined : canonical(args.account);
    const instrument = args.instrument === undefined ? undefined : instrumentOf(args.instrument);
    const side = args.marketPosition === undefined ? undefined : enumOf(args.marketPosition, ['long', 'short'] as const);
    const matching = [...positions.entries()]
      .map(([key, p]) => ({ account: key.split('|')[0]!, instrument: key.split('|')[1]!, quantity: p.quantity }))
      .filter((p) => p.quantity !== 0 && (account === undefined || p.account === account) && (instrument === undefined || p.instrument === instrument))
      .filter((p) => side === undefined || sideOf(p.quantity) === side);
    const orderIds =
      side === undefined ? cancelWorking({ account, instrument }) : matching.flatMap((p) => cancelWorking({ account: p.account, instrument: p.instrument }));
    const closedPositions = matching.map((p) => close(p.account, p.instrument));
    return { orderIds, closedPositions, success: true, ...(closedPositions.length === 0 ? { warning: 'No positions to flatten' } : {}) };
  }

  const findOrder = (account: string, id: unknown) => orders.find((o) => o.account === account && typeof id === 'string' && o.ids.includes(id));
  const flag = (value: unknown) => value === true || (typeof value === 'string' && ['true', '1'].includes(value.toLowerCase()));
  /** §3.3: the documented text for an order that is unknown or no longer working. */
  const notWorking = (id: unknown) => new Refusal(400, { error: `Order linked to '${String(id)}' not found or already terminal.` });
  const noPosition = (instrument: string, typed: unknown) =>
    new Refusal(400, { error: `No position found for instrument '${instrument}' in account '${String(typed)}'` });
  /** Objects carry `success` unless `minimal` and the documented example has none. */
  const withSuccess = (body: Record<string, unknown>) => (options.minimal ? body : { ...body, success: true });

  /** One operation with its flat args: the success body, or a Refusal. */
  function run(api: string, args: Record<string, unknown>): Body {
    const account = () => canonical(args.account);
    switch (api) {
      case 'PlaceOrder':
        return { orderId: place(account(), args).orderId, success: true };
      case 'FlatPlace': {
        // §3.2: the instrument's orders cancelled (even when flat), the position closed if any, then the order placed.
        const name = account();
        const order = draft(name, args);
        cancelWorking({ account: name, instrument: order.instrument });
        if (positionOf(name, order.instrument).quantity !== 0) close(name, order.instrument);
        return { orderId: submit(order).orderId, success: true };
      }
      case 'ReversePosition': {
        const name = account();
        const instrument = instrumentOf(args.instrument);
        if (positionOf(name, instrument).quantity === 0) throw noPosition(instrument, args.account);
        const order = draft(name, args);
        close(name, instrument);
        return { orderId: submit(order).orderId, success: true };
      }
      case 'Reverse': {
        // §3.11: long N becomes short N: the close, then a MARKET order opening the other side.
        const name = account();
        const instrument = instrumentOf(args.instrument);
        const held = positionOf(name, instrument).quantity;
        if (held === 0) throw noPosition(instrument, args.account);
        close(name, instrument);
        return { orderId: market(name, instrument, held > 0 ? 'Sell' : 'Buy', Math.abs(held)).orderId, success: true };
      }
      case 'Cancel': {
        const order = findOrder(account(), args.orderId);
        if (!order || order.state !== 'Working') throw notWorking(args.orderId);
        cancelOne(order);
        return { orderId: order.orderId, success: true };
      }
      case 'CancelOrders': {
        const name = account();
        return { orderIds: cancelWorking({ account: name, instrument: args.instrument === undefined ? undefined : instrumentOf(args.instrument) }), success: true };
      }
      case 'CancelAllOrders':
        return { orderIds: cancelWorking({ instrument: args.instrument === undefined ? undefined : instrumentOf(args.instrument) }), success: true };
      case 'Change': {
        // §3.6, doc P5: the service documents only `Invalid request` for an order it cannot change.
        const order = findOrder(account(), args.orderId);
        if (!order || order.state !== 'Working') throw invalid();
        const quantity = args.quantity === undefined || args.quantity === 0 ? 0 : wholeNumber(args.quantity, 1);
        const limit = priceOf(args.limitPrice);
        const stop = priceOf(args.stopPrice);
        if (limit && order.type !== 'Limit' && order.type !== 'StopLimit') throw invalid();
        if (stop && order.type !== 'StopMarket' && order.type !== 'StopLimit') throw invalid();
        if (args.strategyId !== undefined && order.strategy?.id !== args.strategyId) throw invalid();
        if (quantity) order.quantity = quantity;
        if (limit) order.limit = order.limitChanged = limit;
        if (stop) order.stop = order.stopChanged = stop;
        // The documented example answers with an id other than the request's: NT8 gave the order a new one.
        order.orderId = hex();
        order.ids.push(order.orderId);
        order.events.push({ at: Date.now(), event: 'ChangeSubmitted' }, { at: Date.now(), event: 'Working' });
        const last = prices.get(order.instrument);
        if (last !== undefined && marketable(order, last)) fill(order, last);
        return { orderId: order.orderId, success: true };
      }
      case 'Replace': {
        // §3.7: the new order only if the old one existed and was cancelled; doc P6 documents `Invalid request`.
        const name = account();
        const old = findOrder(name, args.orderId);
        if (!old || old.state !== 'Working') throw invalid();
        const order = draft(name, args, {});
        cancelOne(old);
        return { orderId: submit(order).orderId, success: true };
      }
      case 'CancelAndBracket': {
        const name = account();
        const instrument = instrumentOf(args.instrument);
        const action = enumOf(args.action, ['Buy', 'Sell'] as const);
        const quantity = wholeNumber(args.quantity, 1);
        const takeProfit = priceOf(args.takeProfit);
        const stopLoss = priceOf(args.stopLoss);
        const tif = args.timeInForce === undefined ? 'Gtc' : enumOf(args.timeInForce, ['Day', 'Gtc'] as const);
        if (!takeProfit && !stopLoss) throw invalid();
        const held = positionOf(name, instrument).quantity;
        if ((action === 'Buy' && held < 0) || (action === 'Sell' && held > 0)) throw invalid();
        const last = prices.get(instrument);
        const up = action === 'Buy' ? 1 : -1;
        if (last !== undefined && ((takeProfit && (takeProfit - last) * up <= 0) || (stopLoss && (last - stopLoss) * up <= 0))) throw invalid();
        const size = held === 0 ? quantity : Math.min(quantity, Math.abs(held));
        const cancelledOrderIds = cancelWorking({ account: name, instrument });
        const ocoId = hex();
        const exit = action === 'Buy' ? 'Sell' : 'Buy';
        const common = { instrument, action: exit, quantity: size, timeInForce: tif, ocoId };
        const placed = [
          ...(takeProfit ? [place(name, { ...common, orderType: 'Limit', limitPrice: takeProfit })] : []),
          ...(stopLoss ? [place(name, { ...common, orderType: 'StopMarket', stopPrice: stopLoss })] : []),
        ];
        const orderIds = placed.map((o) => o.orderId);
        return options.minimal ? { orderIds, success: true } : { orderIds, cancelledOrderIds, ocoId, quantity: size, success: true };
      }
      case 'GetOrder': {
        const order = findOrder(account(), args.orderId);
        if (!order) throw invalid();
        return withSuccess(orderObject(order));
      }
      case 'GetOrderStatus': {
        const order = findOrder(account(), args.orderId);
        if (!order) throw invalid();
        return { status: order.state, success: true };
      }
      case 'GetOrderLifecycle': {
        // The REST reply is not captured (§3.9); this is the MCP tool's shape the reference gives.
        const name = account();
        const order = findOrder(name, args.orderId);
        if (!order) throw invalid();
        const events = order.events.map((e) => ({ timestamp: ntTime(e.at), epoch: e.at, source: 'NT8', event: e.event, orderState: e.event }));
        return { success: true, orderId: order.orderId, originalOrderId: order.ids[0], account: name, count: events.length, events };
      }
      case 'GetOrders': {
        const name = account();
        const list = orders.filter((o) => o.account === name && (!flag(args.activeOnly) || o.state === 'Working')).map(orderObject);
        return options.minimal ? { orders: list } : { orders: list, count: list.length, success: true };
      }
      case 'ClosePosition': {
        const name = account();
        const instrument = instrumentOf(args.instrument);
        if (positionOf(name, instrument).quantity === 0) throw new Refusal(400, { error: `No positions found for instrument '${instrument}'` });
        const quantity = args.quantity === undefined ? undefined : wholeNumber(args.quantity, 1);
        const percent = quantity === undefined && args.percent !== undefined ? args.percent : undefined;
        if (percent !== undefined && !(typeof percent === 'number' && percent > 0 && percent <= 1)) throw invalid();
        const size = Math.abs(positionOf(name, instrument).quantity);
        return { closedPositions: [close(name, instrument, quantity ?? (percent === undefined ? undefined : Math.ceil(percent * size - 1e-9)))], success: true };
      }
      case 'Flatten': {
        // §3.13: the account's orders (of the instrument) cancelled, its positions closed; a warning when there were none.
        const name = account();
        const instrument = args.instrument === undefined ? undefined : instrumentOf(args.instrument);
        cancelWorking({ account: name, instrument });
        const open = openPositions(name).map(([key]) => key.split('|')[1]!).filter((i) => instrument === undefined || i === instrument);
        const closedPositions = open.map((i) => close(name, i));
        return { closedPositions, success: true, ...(closedPositions.length === 0 ? { warning: 'No positions to flatten' } : {}) };
      }
      case 'FlattenEverything':
        return flattenEverything(args);
      case 'CloseStrategy': {
        const name = account();
        const strategy = typeof args.strategyId === 'string' ? strategies.get(args.strategyId) : undefined;
        if (!strategy || strategy.account !== name || strategy.closed) throw invalid();
        strategy.closed = true;
        for (const o of orders) if (o.strategy?.id === args.strategyId && o.state === 'Working') cancelOne(o);
        if (positionOf(name, strategy.instrument).quantity !== 0) close(name, strategy.instrument);
        return { strategyId: args.strategyId as string, success: true };
      }
      case 'GetPosition':
        return withSuccess(positionObject(account(), instrumentOf(args.instrument)));
      case 'GetPositions': {
        const list = positionList(account(), flag(args.includeFlat));
        return options.minimal ? list : { positions: list, count: list.length, success: true };
      }
      case 'GetAllPositions': {
        const list = positionList(undefined, flag(args.includeFlat));
        return { positions: list, count: list.length, success: true };
      }
      case 'ListAccounts':
        return options.minimal ? accounts.map((name) => ({ name })) : { accounts: accounts.map(accountObject), count: accounts.length, success: true };
      case 'GetAccount':
        return { ...accountObject(account()), success: true };
      case 'GetSnapshot': {
        const now = Date.now();
        const entries = accounts.map((name) => ({ account: { ...accountObject(name), type: 'NinjaTrader.Cbi.Account', isAccountFlat: openPositions(name).length === 0 }, positions: positionList(name, false) }));
        return withSuccess({ type: 'snapshot', timestamp: new Date(now).toISOString(), epoch: now, accounts: entries });
      }
      case 'GetWatermarks': {
        // Always the documented `{"success": true, "data": {...}}` (doc C3).
        const name = account();
        const m = money(name);
        const pnl = m.realized + m.unrealized;
        const high = highs.get(name) ?? { pnlhigh: pnl, netliqhigh: m.netLiquidation, unrealhigh: m.unrealized };
        Object.assign(high, { pnlhigh: Math.max(high.pnlhigh, pnl), netliqhigh: Math.max(high.netliqhigh, m.netLiquidation), unrealhigh: Math.max(high.unrealhigh, m.unrealized) });
        highs.set(name, high);
        const stats = { pnl, total: pnl, unrealized: m.unrealized, poscount: openPositions(name).length, netliq: m.netLiquidation, ...high };
        return { success: true, data: { account: name, watermarks: { ...high }, stats } };
      }
      case 'GetQuote':
        return quotes(args, false);
      case 'GetQuoteLegacy':
        account();
        return quotes(args, true);
      case 'GetBars':
        return bars(args);
      case 'GetExecutions': {
        const name = account();
        const lookback = args.lookbackTime === undefined ? 320 : wholeNumber(args.lookbackTime, 1, 900);
        const since = Date.now() - lookback * 1000;
        const list = executions.filter((e) => e.order.account === name && e.at >= since).map(executionObject);
        return options.minimal ? { executions: list } : { executions: list, count: list.length, success: true };
      }
      case 'GetExecution': {
        const name = account();
        const execution = executions.find((e) => e.order.account === name && e.id === args.executionId);
        if (!execution) throw invalid();
        return withSuccess(executionObject(execution));
      }
      case 'Catalog':
        return { endpoints: ROUTES.map(catalogEntry), success: true };
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

  /**
   * The answer to one request, as status and body; success bodies shaped by the options. `api` is
   * the operation (or the refusal an RPC's name and args earned); undefined when it never answers.
   */
  function answer(api: string | Refusal, args: Record<string, unknown>, transport: 'http' | 'ws', wsName?: string): { status: number; body: unknown } | undefined {
    const name = typeof api === 'string' ? api : (wsName ?? '');
    const record = (status: number) => requests.push({ transport, api: name, args, status, ...(wsName === undefined ? {} : { wsName }) });
    let result: { status: number; body: unknown };
    if (limited()) result = { status: 429, body: { error: 'Rate limit exceeded' } };
    else if (options.stall && !WITHOUT_ADD_ON.has(name)) {
      record(0);
      return undefined;
    } else if (options.disconnected && !WITHOUT_ADD_ON.has(name)) result = { status: 408, body: { success: false, error: 'NinjaTrader is not connected' } };
    else {
      try {
        if (typeof api !== 'string') throw api;
        const ran = run(api, args);
        const body = options.nulls ? typedNulls(api, ran) : ran;
        // GetWatermarks' documented body is already `{"success": true, "data": {...}}`.
        result = { status: 200, body: options.envelope === 'data' && !Array.isArray(body) && api !== 'GetWatermarks' ? envelope(body) : body };
      } catch (error) {
        if (!(error instanceof Refusal)) throw error;
        result = { status: error.status, body: error.body };
      }
    }
    record(result.status);
    return result;
  }

  /**
   * A success body as a typed serialiser writes it (the `nulls` option): a string without a value
   * is `null`, not `''` (an order's `ocoId`, `oco`, `name`), and the reply's members that this
   * answer does not fill are there as `null`: `error` and `warning` on every object, the filtered
   * flatten's `orderIds` on an account's flatten, `orderId` on a status.
   */
  function typedNulls(api: string, body: Body): Body {
    const valued = (value: unknown): unknown => {
      if (value === '') return null;
      if (Array.isArray(value)) return value.map(valued);
      if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, valued(v)]));
      return value;
    };
    if (Array.isArray(body)) return body.map(valued);
    const declared: Record<string, null> = { error: null, warning: null };
    if (api === 'Flatten') declared.orderIds = null;
    if (api === 'GetOrderStatus') declared.orderId = null;
    return { ...declared, ...(valued(body) as Record<string, unknown>) };
  }

  const envelope = (body: Record<string, unknown>) => {
    const { success: _success, ...data } = body;
    return { success: true, data };
  };

  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };

  // The webhook (webhook-reference.md §1): text in, the key in the body (the user's secret key,
  // the same as the API's token, §1.2), no header needed; it only receives here, executes nothing.
  const webhookPath = `/v1/send/wh${randomBytes(4).toString('hex')}/${randomBytes(12).toString('base64url')}`;
  const webhookMessages: WebhookMessage[] = [];
  function webhook(req: IncomingMessage, res: ServerResponse, text: string): void {
    const record = (status: number) => webhookMessages.push({ status, contentType: req.headers['content-type'], authorization: req.headers.authorization, text });
    if (req.url !== webhookPath) return send(res, 404, { success: false, error: 'not_found' });
    if (req.method !== 'POST') return send(res, 405, { success: false, error: 'method_not_allowed' });
    try {
      const value: unknown = JSON.parse(text);
      if (value !== null && typeof value === 'object') {
        record(400);
        return send(res, 400, { success: false, error: 'invalid_format' }); // §1.1: JSON refused (observed)
      }
    } catch {
      // Text, as it should be.
    }
    const key = /(?:^|;)\s*key\s*=\s*([^;\r\n]*?)\s*(?:;|$)/im.exec(text)?.[1];
    if (key !== token) {
      record(401);
      return send(res, 401, { success: false, error: 'invalid_secret_key' }); // §1.2, §6.1
    }
    const answer = options.webhookAnswer ?? { status: 200, body: 'Alert received' };
    record(answer.status);
    res.writeHead(answer.status, { 'content-type': 'text/plain' }).end(answer.body);
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.url?.startsWith('/v1/send/')) return webhook(req, res, Buffer.concat(chunks).toString('utf8'));
      if (req.headers.authorization !== `Bearer ${token}`) return send(res, 401, { error: 'Unauthorized' });
      const url = new URL(req.url!, 'http://double');
      const path = url.pathname.replace(/^\/v1\/api/, '');
      if (!url.pathname.startsWith('/v1/api/')) return send(res, 404, { success: false, error: 'not_found', detail: 'not an API path' });
      const route = ROUTES.find((r) => r.method === req.method && r.path.test(path));
      if (!route)
        return send(res, 404, { success: false, error: 'not_found', detail: `No route ${req.method} ${url.pathname}`, did_you_mean: didYouMean(req.method!, url.pathname) });
      // The project's decisions (§11): JSON is read as UTF-8, strictly; a compressed body is refused.
      const encoding = req.headers['content-encoding'];
      if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return send(res, 415, { error: 'Invalid request' });
      let text: string;
      try {
        text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(Buffer.concat(chunks));
      } catch {
        return send(res, 400, { error: 'Invalid request' });
      }
      let body: Record<string, unknown> = {};
      try {
        // §1.3 (the project's decisions): one byte-order mark before the JSON is ignored.
        const json = text.replace(/^\uFEFF/, '');
        if (json.trim() !== '') body = JSON.parse(json) as Record<string, unknown>;
      } catch {
        return send(res, 400, { error: 'Invalid request' });
      }
      if (body === null || typeof body !== 'object' || Array.isArray(body)) return send(res, 400, { error: 'Invalid request' });
      const args: Record<string, unknown> = present({ ...Object.fromEntries(url.searchParams), ...body });
      const match = route.path.exec(path)!;
      route.params.forEach((name, i) => (args[name] = decodeURIComponent(match[i + 1]!)));
      const answered = answer(route.api, args, 'http');
      if (answered) send(res, answered.status, answered.body);
    });
  });

  const streams = createDoubleStreams({ prices, accounts, positionList }); // streams: see the region at the end
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    // §1.3: an Upgrade other than websocket (h2c) is served as if the header were absent: the
    // request goes back, without its upgrade headers, to Node's HTTP parser on the same socket.
    if (!/(^|,)\s*websocket\s*(\/[^,]*)?\s*(,|$)/i.test(req.headers.upgrade ?? '')) {
      const lines = [`${req.method} ${req.url} HTTP/${req.httpVersion}`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        const name = req.rawHeaders[i]!.toLowerCase();
        if (name === 'upgrade' || name === 'http2-settings') continue;
        const value = name === 'connection' ? req.rawHeaders[i + 1]!.split(',').map((t) => t.trim()).filter((t) => !/^(upgrade|http2-settings)$/i.test(t)).join(', ') : req.rawHeaders[i + 1];
        if (value !== '') lines.push(`${req.rawHeaders[i]}: ${value}`);
      }
      socket.unshift(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), head]));
      server.emit('connection', socket);
      return;
    }
    if (req.url !== '/ws/stream' || req.headers.authorization !== `Bearer ${token}`) {
      socket.end('HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n{"error":"Unauthorized"}');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws: WebSocket) => {
      ws.on('message', (raw, binary) => {
        let message: { action?: unknown; id?: unknown; api?: unknown; args?: unknown };
        try {
          message = binary ? {} : (JSON.parse(raw.toString().replace(/^\uFEFF/, '')) as typeof message);
        } catch {
          return; // §5.4: malformed input gets no reply
        }
        if (message?.action !== 'rpc') return streams.handle(ws, message ?? {}); // a ping gets nothing: the service documents no pong
        const api = typeof message.api === 'string' ? message.api : '';
        const given = message.args ?? {};
        const args = (typeof given === 'object' && !Array.isArray(given) ? present(given as Record<string, unknown>) : given) as Record<string, unknown>;
        const operation = rpcOperation(api, args);
        const answered = operation ? answer(operation, args, 'ws', api) : { body: { error: `Unknown API command '${api}'` } };
        if (answered) ws.send(JSON.stringify({ id: message.id ?? null, data: answered.body }));
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
    webhookUrl: `${url}${webhookPath}`,
    webhookMessages,
    setPrice(instrument, price) {
      prices.set(instrument, price);
      for (const o of orders) if (o.instrument === instrument && o.state === 'Working' && marketable(o, price)) fill(o, o.type === 'Limit' ? o.limit : price);
      streams.priceChanged(instrument);
    },
    configure(settings) {
      Object.assign(options, settings);
      if (settings.rateLimit) {
        tokens = settings.rateLimit.burst;
        refilled = Date.now();
      }
    },
    reset() {
      orders.length = 0;
      executions.length = 0;
      requests.length = 0;
      webhookMessages.length = 0;
      for (const state of [positions, realized, strategies, highs, prices]) state.clear();
      for (const [instrument, price] of startPrices) prices.set(instrument, price);
    },
    strategyOf: (orderId) => orders.find((o) => o.ids.includes(orderId))?.strategy?.id,
    elapse(ms) {
      for (const execution of executions) execution.at -= ms;
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
