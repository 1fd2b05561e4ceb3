/**
 * Every row of the operation table (src/service/operations.ts), through the backend interface
 * (`backend.call(name, args)`), on every backend: the embedded engine; the http and ws backends
 * against a real `trade serve`; the http and ws backends against the reference double
 * (test/helpers/reference-double.ts, written from service-reference.md alone), which also answers
 * in the other ways the reference says a client must accept (the `data` envelope; only documented
 * fields, bare lists). Each row has a case here (CASES is typed by the table, and a test walks
 * the table): its success, read by the row's reply schema, and each error §3 documents for it,
 * mapped to the typed error and exit code of DESIGN.md. The errors every operation can get (§6:
 * unknown account, 401, 408, 429, a reply that never comes) are checked for every row too, and
 * a request that may move money is never sent twice (the double's request log).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { createEmbeddedBackend } from '../../src/backends/embedded.js';
import { createHttpBackend } from '../../src/backends/http.js';
import type { Backend, CallResult } from '../../src/backends/types.js';
import { createWsBackend } from '../../src/backends/ws.js';
import { SIMULATOR } from '../../src/engine/service.js';
import { ConfigError, NetworkError, RateLimitedError, RejectedError } from '../../src/common/errors.js';
import {
  type ArgsOf,
  OPERATION_NAMES,
  OPERATIONS,
  type OperationName,
  type OperationSpec,
  operationForRpc,
  operationForWsName,
  parseArgs,
  wsApiFor,
} from '../../src/service/operations.js';
import { type OrderRead, parseReply } from '../../src/service/shapes.js';
import { CATALOG } from '../../src/server/operations.js';
import { DOUBLE_OPERATIONS, type DoubleOptions, type ReferenceDouble, startReferenceDouble } from '../helpers/reference-double.js';
import { type Harness, startServer, TOKEN } from '../server/harness.js';

const ES = 'ES 06-26';
const NQ = 'NQ 06-26';
/** An instrument nobody has priced. */
const UNPRICED = 'MES 06-26';
const PRICES = { [ES]: 5000, [NQ]: 20000 };
const A = 'Sim101';
const B = 'Sim102';
const TEMPLATE = 'ORB';
const FAKE_ID = 'f'.repeat(32);

/** Rows the double does not serve, and why (its header says the same). */
const NOT_IN_DOUBLE: Partial<Record<OperationName, string>> = {
  GetMarketInfo: 'the reference does not capture its reply (§3.18)',
};

type Server = 'embedded' | 'serve' | 'double';
type Transport = 'embedded' | 'http' | 'ws';

interface Target {
  name: string;
  server: Server;
  transport: Transport;
  /** The double answers with only the fields documented examples show. */
  minimal: boolean;
  double?: ReferenceDouble;
  harness?: Harness;
  /** Each call of this test, by row, and whether it resolved. */
  calls: Array<{ name: OperationName; ok: boolean }>;
  call<K extends OperationName>(name: K, args: ArgsOf<K>): Promise<CallResult<K>>;
  setPrice(instrument: string, price: number): void;
  reset(): void;
  close(): Promise<void>;
}

/** A fresh store or double, priced, with two accounts and an ATM template (serve needs one; the double takes any name). */
async function open(server: Server, transport: Transport, options: DoubleOptions = {}): Promise<Target> {
  const calls: Target['calls'] = [];
  let backend: Backend;
  let double: ReferenceDouble | undefined;
  let harness: Harness | undefined;
  let setPrice: Target['setPrice'];
  let reset: () => void;
  if (server === 'double') {
    const d = await startReferenceDouble({ accounts: [A, B], prices: PRICES, ...options });
    double = d;
    const remote = { token: d.token, timeoutMs: 5000, baseUrl: d.url };
    backend = transport === 'http' ? createHttpBackend(remote) : createWsBackend({ ...remote, wsUrl: d.wsUrl });
    setPrice = (instrument, price) => d.setPrice(instrument, price);
    reset = () => {
      d.reset();
      d.configure({ disconnected: false, stall: false, rateLimit: undefined });
    };
  } else {
    const h = await startServer();
    harness = h;
    h.engine.addAccount(B);
    h.engine.addAtmTemplate({ name: TEMPLATE, stopLossTicks: 8, profitTargetTicks: 16, tickSize: 0.25 });
    const remote = { token: TOKEN, timeoutMs: 5000, baseUrl: h.url };
    backend =
      transport === 'embedded'
        ? createEmbeddedBackend({ file: h.engine.file })
        : transport === 'http'
          ? createHttpBackend(remote)
          : createWsBackend({ ...remote, wsUrl: h.wsUrl });
    setPrice = (instrument, price) => h.engine.setPrice(instrument, price);
    reset = () => {
      const db = new Database(h.engine.file);
      db.exec('DELETE FROM fills; DELETE FROM orders; DELETE FROM positions;');
      db.close();
      for (const [instrument, price] of Object.entries(PRICES)) h.engine.setPrice(instrument, price);
    };
  }
  reset();
  const variant = options.envelope === 'data' ? ' (data envelope)' : options.minimal ? ' (documented fields, bare lists)' : options.nulls ? ' (unset fields as null)' : '';
  return {
    name: server === 'embedded' ? 'embedded' : `${transport} against ${server === 'serve' ? 'trade serve' : 'the reference double'}${variant}`,
    server: transport === 'embedded' ? 'embedded' : server,
    transport,
    minimal: options.minimal ?? false,
    double,
    harness,
    calls,
    async call(name, args) {
      try {
        const result = await backend.call(name, args);
        const read = parseReply((OPERATIONS[name] as OperationSpec).reply(), result.body);
        expect(read.ok, `${name}'s body is not read by its reply schema: ${JSON.stringify(result.body)}`).toBe(true);
        calls.push({ name, ok: true });
        return result;
      } catch (error) {
        calls.push({ name, ok: false });
        throw error;
      }
    },
    setPrice,
    reset() {
      calls.length = 0;
      reset();
    },
    async close() {
      await backend.close();
      await double?.close();
      await harness?.close();
    },
  };
}

/** Args as the CLI builds them: checked and normalized by the row's schema, as a client does. */
const args = <K extends OperationName>(name: K, raw: Record<string, unknown>): ArgsOf<K> => parseArgs(name, raw, 'client');
const market = (raw: Record<string, unknown> = {}) =>
  args('PlaceOrder', { account: A, instrument: ES, action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY', ...raw });

async function place(t: Target, raw: Record<string, unknown> = {}): Promise<string> {
  return (await t.call('PlaceOrder', market(raw))).value.orderId;
}
/** A BUY LIMIT 4000 GTC: it rests (ES is at 5000). */
const rest = (t: Target, raw: Record<string, unknown> = {}) => place(t, { orderType: 'LIMIT', limitPrice: 4000, timeInForce: 'GTC', ...raw });
const getOrder = async (t: Target, orderId: string, account = A) => (await t.call('GetOrder', { account, orderId })).value;
const position = async (t: Target, instrument = ES, account = A) => (await t.call('GetPosition', { account, instrument })).value;
const active = async (t: Target, account = A) => (await t.call('GetOrders', { account, activeOnly: true })).value.orders.map((o) => o.orderId);

async function refusal(promise: Promise<unknown>): Promise<RejectedError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RejectedError);
  expect((error as RejectedError).exitCode).toBe(1);
  return error as RejectedError;
}

/**
 * The service's generic refusal (§3: "Invalid request" on the service) on the double; on the
 * simulator, the same words followed by the field and what is wrong with it (§6.1).
 */
function expectInvalid(t: Target, error: RejectedError, field: string): void {
  if (t.server === 'double') expect(error.message).toBe('Invalid request');
  else expect(error.message).toMatch(new RegExp(`^Invalid request: ${field}: `));
  expect(error.status).toBe(400);
}

/** Change, Replace of an order that cannot be: the Cancel text on the server, the documented generic one on the service (§3.6, §3.7). */
function expectNotWorking(t: Target, error: RejectedError, orderId: string): void {
  expect(error.message).toBe(t.server === 'double' ? 'Invalid request' : `Order linked to '${orderId}' not found or already terminal.`);
}

/** The strategy an entry started: the Order's `ownerStrategy` (§4.1); minimal Orders lack it, so the double says. */
async function strategyOf(t: Target, entry: string): Promise<string> {
  if (t.minimal) return t.double!.strategyOf(entry)!;
  const owner = (await getOrder(t, entry)).ownerStrategy;
  expect(owner).toMatchObject({ id: expect.any(String), name: TEMPLATE });
  return owner!.id;
}

/** The WebSocket names the double saw for a row, for §3.14's Flatten rule. */
const wsNames = (t: Target, api: string) => t.double!.requests.filter((r) => r.api === api).map((r) => r.wsName);

interface Case<K extends OperationName> {
  /** Args of a call that reaches the service (for the errors every operation can get); no state needed. */
  args: () => ArgsOf<K>;
  /** What the row does when it succeeds, read through the backend (on every server but those `unavailable` names). */
  success?: (t: Target) => Promise<void>;
  /**
   * The servers where the row cannot succeed, and what they answer instead, under a title that
   * says so: a route the simulator does not model (501, §2), a reply the double does not serve.
   */
  unavailable?: Partial<Record<Server, { title: string; run: (t: Target) => Promise<void> }>>;
  /** Each error §3 documents for the row beyond §6's (unknown account, 401, 408, 429), by title. */
  errors: Record<string, (t: Target) => Promise<void>>;
}

const CASES: { [K in OperationName]: Case<K> } = {
  PlaceOrder: {
    args: () => market(),
    async success(t) {
      const { value } = await t.call('PlaceOrder', market({ quantity: 2 }));
      expect(value.orderId).toMatch(/^[0-9a-f]{32}$/);
      expect((await t.call('GetOrderStatus', { account: A, orderId: value.orderId })).value.status).toBe('Filled');
      expect(await rest(t, { orderId: 'c-1' })).toBe('c-1');
      expect(await getOrder(t, 'c-1')).toMatchObject({ orderId: 'c-1', orderState: 'Working', orderType: 'Limit', limitPrice: 4000, quantity: 1 });
    },
    errors: {
      'a client orderId already used: the exact message, nothing placed': async (t) => {
        await rest(t, { orderId: 'dup-1' });
        const error = await refusal(rest(t, { orderId: 'dup-1', limitPrice: 4100 }));
        expect(error.message).toBe(`Invalid request: orderId: 'dup-1' is already used in account '${A}'`);
        expect(await active(t)).toEqual(['dup-1']);
      },
      'requireMarketPosition not met': async (t) => {
        const error = await refusal(place(t, { requireMarketPosition: 'long,short' }));
        expect(error.message).toBe(`Market position requirement not met: ${ES} in account '${A}' is Flat; required long, short`);
        expect(await position(t)).toMatchObject({ marketPosition: 'Flat', quantity: 0 });
      },
      'maxPositions reached': async (t) => {
        await place(t);
        const error = await refusal(place(t, { instrument: NQ, maxPositions: 1 }));
        expect(error.message).toBe(`Max positions reached: account '${A}' has 1 open positions; maxPositions is 1`);
        expect(await position(t, NQ)).toMatchObject({ marketPosition: 'Flat' });
      },
    },
  },
  FlatPlace: {
    args: () => market(),
    async success(t) {
      await place(t, { quantity: 2 });
      const resting = await rest(t);
      const { value } = await t.call('FlatPlace', market({ action: 'SELL' }));
      expect(await getOrder(t, value.orderId)).toMatchObject({ orderState: 'Filled', orderType: 'Market', quantity: 1 });
      expect(await position(t)).toMatchObject({ marketPosition: 'Short', quantity: 1 });
      expect((await getOrder(t, resting)).orderState).toBe('Cancelled');
      // Unlike ReversePosition it never fails for lack of a position (§3.2).
      await t.call('FlatPlace', market({ instrument: NQ }));
      expect(await position(t, NQ)).toMatchObject({ marketPosition: 'Long', quantity: 1 });
    },
    errors: {
      'as PlaceOrder: a client orderId already used, nothing closed': async (t) => {
        await place(t, { quantity: 2, orderId: 'fp-1' });
        const error = await refusal(t.call('FlatPlace', market({ action: 'SELL', orderId: 'fp-1' })));
        expect(error.message).toBe(`Invalid request: orderId: 'fp-1' is already used in account '${A}'`);
        expect(await position(t)).toMatchObject({ marketPosition: 'Long', quantity: 2 });
      },
    },
  },
  ReversePosition: {
    args: () => market(),
    async success(t) {
      await place(t, { quantity: 2 });
      const { value } = await t.call('ReversePosition', market({ action: 'SELL' }));
      expect(await getOrder(t, value.orderId)).toMatchObject({ orderState: 'Filled', quantity: 1 });
      expect(await position(t)).toMatchObject({ marketPosition: 'Short', quantity: 1 });
    },
    errors: {
      'no position: the exact message, the account as typed, nothing done': async (t) => {
        const error = await refusal(t.call('ReversePosition', market({ account: 'sim101', instrument: NQ })));
        expect(error.message).toBe(`No position found for instrument '${NQ}' in account 'sim101'`);
        expect((await t.call('GetOrders', { account: A })).value.orders).toEqual([]);
      },
    },
  },
  Reverse: {
    args: () => ({ account: A, instrument: ES }),
    async success(t) {
      await place(t, { quantity: 2 });
      const { value } = await t.call('Reverse', { account: A, instrument: ES });
      expect(await getOrder(t, value.orderId)).toMatchObject({ orderState: 'Filled', orderType: 'Market', quantity: 2 });
      expect(await position(t)).toMatchObject({ marketPosition: 'Short', quantity: 2 });
      await t.call('Reverse', { account: A, instrument: ES });
      expect(await position(t)).toMatchObject({ marketPosition: 'Long', quantity: 2 });
    },
    errors: {
      'no position: the exact message, the account as typed': async (t) => {
        const error = await refusal(t.call('Reverse', { account: 'sim101', instrument: NQ }));
        expect(error.message).toBe(`No position found for instrument '${NQ}' in account 'sim101'`);
      },
    },
  },
  Cancel: {
    args: () => ({ account: A, orderId: FAKE_ID }),
    async success(t) {
      const orderId = await rest(t);
      expect((await t.call('Cancel', { account: A, orderId })).value.orderId).toBe(orderId);
      expect((await getOrder(t, orderId)).orderState).toBe('Cancelled');
      // One member of an OCO group cancelled cancels the others (§3.3).
      const first = await rest(t, { ocoId: 'g1' });
      const second = await rest(t, { ocoId: 'g1', limitPrice: 3990 });
      await t.call('Cancel', { account: A, orderId: first });
      expect((await getOrder(t, second)).orderState).toBe('Cancelled');
    },
    errors: {
      'an order already terminal: the exact message': async (t) => {
        const orderId = await place(t);
        const error = await refusal(t.call('Cancel', { account: A, orderId }));
        expect(error.message).toBe(`Order linked to '${orderId}' not found or already terminal.`);
      },
      'an unknown order: the exact message': async (t) => {
        const error = await refusal(t.call('Cancel', { account: A, orderId: 'nope-1' }));
        expect(error.message).toBe(`Order linked to 'nope-1' not found or already terminal.`);
      },
    },
  },
  CancelOrders: {
    args: () => ({ account: A }),
    async success(t) {
      const es = [await rest(t), await rest(t, { limitPrice: 3990 })];
      const nq = await rest(t, { instrument: NQ, limitPrice: 19000 });
      expect((await t.call('CancelOrders', { account: A, instrument: ES })).value.orderIds.sort()).toEqual(es.sort());
      expect((await t.call('CancelOrders', { account: 'sim101' })).value.orderIds).toEqual([nq]);
      expect((await t.call('CancelOrders', { account: A })).value.orderIds).toEqual([]);
    },
    // §3.4 documents no error beyond §6's.
    errors: {},
  },
  CancelAllOrders: {
    args: () => ({}),
    async success(t) {
      const mine = await rest(t);
      const theirs = await rest(t, { account: B });
      const theirNq = await rest(t, { account: B, instrument: NQ, limitPrice: 19000 });
      expect((await t.call('CancelAllOrders', { instrument: NQ })).value.orderIds).toEqual([theirNq]);
      expect((await t.call('CancelAllOrders', {})).value.orderIds.sort()).toEqual([mine, theirs].sort());
      expect([...(await active(t)), ...(await active(t, B))]).toEqual([]);
    },
    errors: {},
  },
  Change: {
    args: () => ({ account: A, orderId: FAKE_ID, limitPrice: 4010 }),
    async success(t) {
      const placed = await rest(t);
      const { value } = await t.call('Change', args('Change', { account: A, orderId: placed, quantity: 2, limitPrice: 4010 }));
      // The server keeps the id; the service's example answers another, which the client uses from then on (§3.6).
      if (t.server !== 'double') expect(value.orderId).toBe(placed);
      expect(await getOrder(t, value.orderId)).toMatchObject({ orderState: 'Working', quantity: 2, limitPrice: 4010, limitPriceChanged: 4010 });
      // A limit made marketable fills at once (§8.6).
      const again = (await t.call('Change', args('Change', { account: A, orderId: value.orderId, limitPrice: 5000 }))).value.orderId;
      expect(await getOrder(t, again)).toMatchObject({ orderState: 'Filled', averageFillPrice: 5000, quantity: 2 });
    },
    errors: {
      'an order already terminal': async (t) => {
        const orderId = await place(t);
        expectNotWorking(t, await refusal(t.call('Change', args('Change', { account: A, orderId, quantity: 2 }))), orderId);
      },
      'a price the order type lacks, the order unchanged': async (t) => {
        const orderId = await rest(t);
        expectInvalid(t, await refusal(t.call('Change', args('Change', { account: A, orderId, stopPrice: 3990 }))), 'stopPrice');
        expect(await getOrder(t, orderId)).toMatchObject({ orderState: 'Working', limitPrice: 4000 });
      },
    },
  },
  Replace: {
    args: () => args('Replace', { account: A, orderId: FAKE_ID, instrument: ES, action: 'BUY', quantity: 1, orderType: 'LIMIT', limitPrice: 4000, timeInForce: 'GTC' }),
    async success(t) {
      const old = await rest(t);
      const replacement = args('Replace', { account: A, orderId: old, instrument: ES, action: 'BUY', quantity: 3, orderType: 'LIMIT', limitPrice: 4100, timeInForce: 'GTC' });
      const { value } = await t.call('Replace', replacement);
      expect(value.orderId).not.toBe(old);
      expect((await getOrder(t, old)).orderState).toBe('Cancelled');
      expect(await getOrder(t, value.orderId)).toMatchObject({ orderState: 'Working', quantity: 3, limitPrice: 4100 });
    },
    errors: {
      'an order already terminal: nothing placed': async (t) => {
        const old = await rest(t);
        await t.call('Cancel', { account: A, orderId: old });
        const error = await refusal(t.call('Replace', { ...CASES.Replace.args(), orderId: old }));
        expectNotWorking(t, error, old);
        expect(await active(t)).toEqual([]);
      },
    },
  },
  CancelAndBracket: {
    args: () => args('CancelAndBracket', { account: A, instrument: ES, action: 'BUY', quantity: 1, takeProfit: 5050, stopLoss: 4950 }),
    async success(t) {
      await place(t, { quantity: 2 });
      const resting = await rest(t);
      const { value } = await t.call('CancelAndBracket', args('CancelAndBracket', { account: A, instrument: ES, action: 'BUY', quantity: 5, takeProfit: 5050, stopLoss: 4950 }));
      expect(value.orderIds).toHaveLength(2);
      if (!t.minimal) expect(value).toMatchObject({ quantity: 2, cancelledOrderIds: [resting], ocoId: expect.any(String) });
      const [target, stop] = value.orderIds as [string, string];
      expect((await getOrder(t, resting)).orderState).toBe('Cancelled');
      expect(await getOrder(t, target)).toMatchObject({ orderType: 'Limit', orderState: 'Working', limitPrice: 5050, quantity: 2 });
      expect(await getOrder(t, stop)).toMatchObject({ orderType: 'StopMarket', orderState: 'Working', quantity: 2 });
      await t.call('Cancel', { account: A, orderId: target });
      expect((await getOrder(t, stop)).orderState).toBe('Cancelled');
    },
    errors: {
      'a position on the other side: nothing cancelled': async (t) => {
        await place(t, { action: 'SELL' });
        const resting = await rest(t, { action: 'SELL', limitPrice: 6000 });
        expectInvalid(t, await refusal(t.call('CancelAndBracket', CASES.CancelAndBracket.args())), 'action');
        expect(await active(t)).toEqual([resting]);
      },
      'a take-profit on the wrong side of the last price': async (t) => {
        const bracket = { ...CASES.CancelAndBracket.args(), takeProfit: 4900 };
        expectInvalid(t, await refusal(t.call('CancelAndBracket', bracket)), 'takeProfit');
      },
    },
  },
  GetOrder: {
    args: () => ({ account: A, orderId: FAKE_ID }),
    async success(t) {
      const orderId = await rest(t);
      const order: OrderRead = (await t.call('GetOrder', { account: 'sim101', orderId })).value;
      expect(order).toMatchObject({ orderId, account: A, instrument: ES, orderType: 'Limit', orderState: 'Working', quantity: 1, filled: 0, limitPrice: 4000, averageFillPrice: 0 });
      if (!t.minimal) expect(order).toMatchObject({ orderAction: 'Buy', timeInForce: 'Gtc' });
    },
    errors: {
      'an unknown order': async (t) => {
        expectInvalid(t, await refusal(t.call('GetOrder', { account: A, orderId: 'nope-1' })), 'orderId');
      },
      "another account's order": async (t) => {
        const orderId = await rest(t, { account: B });
        expectInvalid(t, await refusal(t.call('GetOrder', { account: A, orderId })), 'orderId');
      },
    },
  },
  GetOrders: {
    args: () => ({ account: A }),
    async success(t) {
      const filled = await place(t);
      const working = await rest(t);
      const all = (await t.call('GetOrders', { account: A })).value.orders;
      expect(all.map((o) => [o.orderId, o.orderState])).toEqual([
        [filled, 'Filled'],
        [working, 'Working'],
      ]);
      expect(await active(t)).toEqual([working]);
    },
    errors: {},
  },
  GetOrderStatus: {
    args: () => ({ account: A, orderId: FAKE_ID }),
    async success(t) {
      const status = async (orderId: string) => (await t.call('GetOrderStatus', { account: A, orderId })).value.status;
      const working = await rest(t);
      expect(await status(working)).toBe('Working');
      await t.call('Cancel', { account: A, orderId: working });
      expect(await status(working)).toBe('Cancelled');
      expect(await status(await place(t))).toBe('Filled');
    },
    errors: {
      'an unknown order': async (t) => {
        expectInvalid(t, await refusal(t.call('GetOrderStatus', { account: A, orderId: 'nope-1' })), 'orderId');
      },
    },
  },
  GetOrderLifecycle: {
    args: () => ({ account: A, orderId: FAKE_ID }),
    async success(t) {
      // Only the double serves it (§3.9): the simulator does not model it (`unavailable`).
      const orderId = await place(t);
      const { value } = await t.call('GetOrderLifecycle', { account: A, orderId });
      expect(value).toMatchObject({ orderId, account: A, events: expect.arrayContaining([expect.objectContaining({ event: 'Filled' })]) });
    },
    unavailable: Object.fromEntries(
      (['embedded', 'serve'] as const).map((server) => [
        server,
        {
          title: 'not simulated: 501 not_implemented, a refusal (exit 1), nothing done (§2)',
          async run(t: Target) {
            const orderId = await place(t);
            const error = await refusal(t.call('GetOrderLifecycle', { account: A, orderId }));
            expect({ status: error.status, body: error.body }).toEqual({
              status: 501,
              body: { success: false, error: 'not_implemented', detail: 'GET /v1/api/accounts/{account}/orders/{orderId}/lifecycle is not simulated by trade serve' },
            });
            expect(await getOrder(t, orderId)).toMatchObject({ orderId, orderState: 'Filled' });
          },
        },
      ]),
    ),
    errors: {
      'an unknown order (the simulator: not simulated at all)': async (t) => {
        const error = await refusal(t.call('GetOrderLifecycle', { account: A, orderId: 'nope-1' }));
        if (t.server === 'double') expectInvalid(t, error, 'orderId');
        else expect(error.status).toBe(501);
      },
    },
  },
  ClosePosition: {
    args: () => ({ account: A, instrument: ES }),
    async success(t) {
      const close = async (part: Record<string, unknown>) =>
        (await t.call('ClosePosition', args('ClosePosition', { account: A, instrument: ES, ...part }))).value.closedPositions;
      await place(t, { quantity: 10 });
      const resting = await rest(t);
      expect(await close({ quantity: 3 })).toEqual([expect.objectContaining({ account: A, instrument: ES, marketPosition: 'Long', quantity: 3, averagePrice: 5000 })]);
      // ceil(0.3 × 7 − 1e-9) = 3; ceil(0.1 × 4) = 1 (§3.10).
      expect(await close({ percent: 0.3 })).toEqual([expect.objectContaining({ marketPosition: 'Long', quantity: 3 })]);
      expect(await close({ percent: 0.1 })).toEqual([expect.objectContaining({ quantity: 1 })]);
      expect(await position(t)).toMatchObject({ marketPosition: 'Long', quantity: 3 });
      // A partial close leaves the instrument's orders; a full one cancels them.
      expect(await active(t)).toEqual([resting]);
      expect(await close({})).toEqual([expect.objectContaining({ marketPosition: 'Long', quantity: 3 })]);
      expect(await position(t)).toMatchObject({ marketPosition: 'Flat', quantity: 0 });
      expect(await active(t)).toEqual([]);
    },
    errors: {
      'no position: the exact message (plural, no account)': async (t) => {
        const error = await refusal(t.call('ClosePosition', { account: A, instrument: NQ }));
        expect(error.message).toBe(`No positions found for instrument '${NQ}'`);
      },
    },
  },
  Flatten: {
    args: () => ({ account: A }),
    async success(t) {
      await place(t, { quantity: 2 });
      await place(t, { instrument: NQ, action: 'SELL' });
      const esResting = await rest(t);
      const nqResting = await rest(t, { instrument: NQ, limitPrice: 19000 });
      const one = (await t.call('Flatten', { account: A, instrument: ES })).value;
      expect(one.closedPositions).toEqual([expect.objectContaining({ instrument: ES, marketPosition: 'Long', quantity: 2 })]);
      expect(await active(t)).toEqual([nqResting]);
      expect(await position(t, NQ)).toMatchObject({ marketPosition: 'Short', quantity: 1 });
      const all = (await t.call('Flatten', { account: A })).value;
      expect(all.closedPositions).toEqual([expect.objectContaining({ instrument: NQ, marketPosition: 'Short', quantity: 1 })]);
      expect([(await getOrder(t, esResting)).orderState, (await getOrder(t, nqResting)).orderState]).toEqual(['Cancelled', 'Cancelled']);
      // Nothing left: still a success, with a warning (§3.13, §1.7).
      const none = (await t.call('Flatten', { account: A })).value;
      expect(none).toMatchObject({ closedPositions: [], warning: 'No positions to flatten' });
      if (t.transport === 'ws' && t.double) expect(wsNames(t, 'Flatten')).toEqual(['Flatten', 'Flatten', 'Flatten']);
    },
    errors: {},
  },
  FlattenEverything: {
    args: () => ({}),
    async success(t) {
      await place(t, { quantity: 2 });
      await place(t, { account: B, instrument: NQ, action: 'SELL' });
      const mine = await rest(t);
      const theirs = await rest(t, { account: B, instrument: NQ, limitPrice: 19000 });
      // Filtered by side: only the short closes, and only its orders are cancelled (§3.14).
      const shorts = (await t.call('FlattenEverything', { marketPosition: 'short' })).value;
      expect(shorts.closedPositions).toEqual([expect.objectContaining({ account: B, instrument: NQ, marketPosition: 'Short', quantity: 1 })]);
      expect(shorts.orderIds).toEqual([theirs]);
      expect(await active(t)).toEqual([mine]);
      // Filtered by account and instrument; over WebSocket that is the account's Flatten, whose reply has no orderIds.
      const mineOnly = (await t.call('FlattenEverything', { account: A, instrument: ES })).value;
      expect(mineOnly.closedPositions).toEqual([expect.objectContaining({ account: A, instrument: ES, marketPosition: 'Long', quantity: 2 })]);
      if (mineOnly.orderIds !== undefined) expect(mineOnly.orderIds).toEqual([mine]);
      expect(await active(t)).toEqual([]);
      // No filter: everything everywhere.
      await place(t, { account: B });
      const last = await rest(t, { instrument: NQ, limitPrice: 19000 });
      const everything = (await t.call('FlattenEverything', {})).value;
      expect(everything.closedPositions).toEqual([expect.objectContaining({ account: B, instrument: ES, marketPosition: 'Long', quantity: 1 })]);
      expect(everything.orderIds).toEqual([last]);
      expect((await t.call('FlattenEverything', {})).value.closedPositions).toEqual([]);
      // §3.14: with any filter the WebSocket name is Flatten, FlattenEverything only with none.
      if (t.transport === 'ws' && t.double) {
        expect(t.double.requests.filter((r) => r.api === 'FlattenEverything' || r.api === 'Flatten').map((r) => r.wsName)).toEqual([
          'Flatten',
          'Flatten',
          'FlattenEverything',
          'FlattenEverything',
        ]);
      }
    },
    errors: {},
  },
  GetPosition: {
    args: () => ({ account: A, instrument: ES }),
    async success(t) {
      await place(t, { quantity: 2 });
      expect(await position(t)).toMatchObject({ account: A, instrument: ES, marketPosition: 'Long', quantity: 2, averagePrice: 5000, marketPrice: 5000, unrealizedProfitLoss: 0 });
      t.setPrice(ES, 5010);
      expect(await position(t)).toMatchObject({ marketPrice: 5010, unrealizedProfitLoss: 1000 });
      expect(await position(t, NQ)).toMatchObject({ instrument: NQ, marketPosition: 'Flat', quantity: 0 });
    },
    errors: {},
  },
  GetAllPositions: {
    args: () => ({}),
    async success(t) {
      await place(t, { quantity: 2 });
      await place(t, { account: B, instrument: NQ, action: 'SELL' });
      const open = (await t.call('GetAllPositions', {})).value.positions;
      expect(open.map((p) => [p.account, p.instrument, p.marketPosition, p.quantity]).sort()).toEqual([
        [A, ES, 'Long', 2],
        [B, NQ, 'Short', 1],
      ]);
      await t.call('ClosePosition', { account: B, instrument: NQ });
      expect((await t.call('GetAllPositions', {})).value.positions).toHaveLength(1);
      const withFlat = (await t.call('GetAllPositions', { includeFlat: true })).value.positions;
      expect(withFlat).toContainEqual(expect.objectContaining({ account: B, instrument: NQ, marketPosition: 'Flat', quantity: 0 }));
    },
    errors: {},
  },
  GetPositions: {
    args: () => ({ account: A }),
    async success(t) {
      await place(t, { quantity: 2 });
      await place(t, { account: B, instrument: NQ, action: 'SELL' });
      const mine = (await t.call('GetPositions', { account: 'sim101' })).value.positions;
      expect(mine).toEqual([expect.objectContaining({ account: A, instrument: ES, marketPosition: 'Long', quantity: 2 })]);
    },
    errors: {},
  },
  ListAccounts: {
    args: () => ({}),
    async success(t) {
      const names = (await t.call('ListAccounts', {})).value.accounts.map((a) => a.name);
      expect(names).toEqual(expect.arrayContaining([A, B]));
    },
    errors: {},
  },
  GetSnapshot: {
    args: () => ({}),
    async success(t) {
      await place(t);
      const { value } = await t.call('GetSnapshot', {});
      const accounts = value.accounts as Array<{ account: { name: string }; positions: unknown[] }>;
      const of = (name: string) => accounts.find((a) => a.account.name === name);
      expect(of(A)?.positions).toEqual([expect.objectContaining({ instrument: ES, marketPosition: 'Long', quantity: 1 })]);
      expect(of(B)?.positions).toEqual([]);
      expect(value).toMatchObject({ type: 'snapshot', timestamp: expect.any(String), epoch: expect.any(Number) });
    },
    errors: {},
  },
  GetAccount: {
    args: () => ({ account: A }),
    async success(t) {
      const account = async () => (await t.call('GetAccount', { account: 'sim101' })).value;
      const before = await account();
      expect(before.name).toBe(A);
      await place(t);
      t.setPrice(ES, 5010);
      await place(t, { action: 'SELL' });
      const after = await account();
      // One ES contract bought at 5000 and sold at 5010: 10 points of 50.
      expect((after.item!.cashValue as number) - (before.item!.cashValue as number)).toBe(500);
      expect(after.item!.realizedProfitLoss).toBe(500);
    },
    errors: {},
  },
  GetWatermarks: {
    args: () => ({ account: A }),
    async success(t) {
      const { value, body } = await t.call('GetWatermarks', { account: 'sim101' });
      // The documented body is `{"success": true, "data": {...}}` (§3.16); the client reads the data.
      expect(body).toMatchObject({ success: true, data: { account: A } });
      expect(value).toMatchObject({ account: A, watermarks: expect.any(Object), stats: expect.any(Object) });
    },
    errors: {},
  },
  GetQuote: {
    args: () => args('GetQuote', { instrument: ES }),
    async success(t) {
      const one = (await t.call('GetQuote', args('GetQuote', { instrument: ES }))).value;
      expect(Array.isArray(one)).toBe(false);
      expect(one).toMatchObject({ instrument: ES, last: 5000 });
      const two = (await t.call('GetQuote', args('GetQuote', { instrument: `${ES},${NQ}` }))).value;
      expect(two).toEqual([expect.objectContaining({ instrument: ES, last: 5000 }), expect.objectContaining({ instrument: NQ, last: 20000 })]);
    },
    errors: {
      'an instrument with no price: nothing partial': async (t) => {
        expectInvalid(t, await refusal(t.call('GetQuote', args('GetQuote', { instrument: `${ES},${UNPRICED}` }))), 'instrument');
      },
    },
  },
  GetQuoteLegacy: {
    args: () => args('GetQuoteLegacy', { account: A, instrument: ES }),
    async success(t) {
      const one = (await t.call('GetQuoteLegacy', args('GetQuoteLegacy', { account: A, instrument: ES }))).value;
      expect(one).toMatchObject({ instrument: ES, last: 5000 });
      const two = (await t.call('GetQuoteLegacy', args('GetQuoteLegacy', { account: A, instrument: `${NQ},${ES}` }))).value;
      expect(two).toEqual([expect.objectContaining({ instrument: NQ }), expect.objectContaining({ instrument: ES })]);
    },
    errors: {
      'an instrument with no price': async (t) => {
        expectInvalid(t, await refusal(t.call('GetQuoteLegacy', args('GetQuoteLegacy', { account: A, instrument: UNPRICED }))), 'instrument');
      },
    },
  },
  GetBars: {
    args: () => args('GetBars', { instrument: ES }),
    async success(t) {
      await place(t, { quantity: 3 });
      const { value } = await t.call('GetBars', args('GetBars', { instrument: ES, periodType: 'minute', period: 1 }));
      const bars = value.bars as Array<{ close: number; volume: number }>;
      expect(value).toMatchObject({ instrument: ES, periodType: 'minute', period: 1, count: bars.length });
      expect(bars.length).toBeGreaterThan(0);
      expect(bars.at(-1)!.close).toBe(5000);
      expect(bars.reduce((n, b) => n + b.volume, 0)).toBe(3);
    },
    errors: {},
  },
  GetMarketInfo: {
    args: () => args('GetMarketInfo', { instrument: ES }),
    // It succeeds nowhere here: the simulator does not model it (§2) and the reference does not capture its reply (§3.18).
    unavailable: {
      ...Object.fromEntries(
        (['embedded', 'serve'] as const).map((server) => [
          server,
          {
            title: 'not simulated: 501 not_implemented, a refusal (exit 1) (§2, §3.18)',
            async run(t: Target) {
              const error = await refusal(t.call('GetMarketInfo', CASES.GetMarketInfo.args()));
              expect({ status: error.status, body: error.body }).toEqual({
                status: 501,
                body: { success: false, error: 'not_implemented', detail: 'GET /v1/api/market/info is not simulated by trade serve' },
              });
            },
          },
        ]),
      ),
      double: {
        title: 'not served by the double (a service without the route): a refusal (exit 1), 404 over HTTP, an unknown API over WebSocket',
        async run(t: Target) {
          const error = await refusal(t.call('GetMarketInfo', CASES.GetMarketInfo.args()));
          if (t.transport === 'http') expect({ status: error.status, error: (error.body as { error?: unknown }).error }).toEqual({ status: 404, error: 'not_found' });
          else expect(error.message).toBe("Unknown API command 'GetMarketInfo'");
        },
      },
    },
    errors: {},
  },
  GetExecutions: {
    args: () => ({ account: A }),
    async success(t) {
      const bought = await place(t);
      const sold = await place(t, { action: 'SELL' });
      const list = (await t.call('GetExecutions', { account: A, lookbackTime: 900 })).value.executions;
      expect(list.map((e) => [e.orderId, e.marketPosition, e.price, e.quantity])).toEqual([
        [bought, 'Long', 5000, 1],
        [sold, 'Short', 5000, 1],
      ]);
      expect((await t.call('GetExecutions', { account: B })).value.executions).toEqual([]);
    },
    errors: {},
  },
  GetExecution: {
    args: () => ({ account: A, executionId: FAKE_ID }),
    async success(t) {
      const orderId = await place(t, { quantity: 2 });
      const [listed] = (await t.call('GetExecutions', { account: A })).value.executions;
      const one = (await t.call('GetExecution', { account: A, executionId: listed!.id })).value;
      expect(one).toMatchObject({ id: listed!.id, orderId, account: A, instrument: ES, quantity: 2, price: 5000 });
    },
    errors: {
      'an unknown execution': async (t) => {
        expectInvalid(t, await refusal(t.call('GetExecution', { account: A, executionId: FAKE_ID })), 'executionId');
      },
    },
  },
  CloseStrategy: {
    args: () => ({ account: A, strategyId: '334081723' }),
    async success(t) {
      const entry = await place(t, { strategy: TEMPLATE });
      const strategyId = await strategyOf(t, entry);
      expect((await t.call('CloseStrategy', { account: A, strategyId })).value.strategyId).toBe(strategyId);
      expect(await position(t)).toMatchObject({ marketPosition: 'Flat', quantity: 0 });
      expect(await active(t)).toEqual([]);
    },
    errors: {
      'an unknown strategy': async (t) => {
        expectInvalid(t, await refusal(t.call('CloseStrategy', CASES.CloseStrategy.args())), 'strategyId');
      },
      'a strategy already closed': async (t) => {
        const strategyId = await strategyOf(t, await place(t, { strategy: TEMPLATE }));
        await t.call('CloseStrategy', { account: A, strategyId });
        expectInvalid(t, await refusal(t.call('CloseStrategy', { account: A, strategyId })), 'strategyId');
      },
    },
  },
};

const BASE: Array<[Server, Transport]> = [
  ['embedded', 'embedded'],
  ['serve', 'http'],
  ['serve', 'ws'],
  ['double', 'http'],
  ['double', 'ws'],
];
const VARIANTS: Array<[Transport, DoubleOptions]> = [
  ['http', { envelope: 'data' }],
  ['ws', { envelope: 'data' }],
  ['http', { minimal: true }],
  ['ws', { minimal: true }],
  ['http', { nulls: true }],
  ['ws', { nulls: true }],
];
const variantTitle = (options: DoubleOptions) =>
  options.envelope === 'data' ? 'the {success, data} envelope' : options.minimal ? 'only documented fields and bare lists' : 'unset fields as null';

/** Rows with an `account` field: an unknown one is a 404 `invalid_account` (§1.4). */
const withAccount = OPERATION_NAMES.filter((name) => 'account' in OPERATIONS[name].fields());

function generate(t: () => Target, server: Server, withErrors: boolean): void {
  for (const name of OPERATION_NAMES) {
    const c = CASES[name] as Case<OperationName>;
    const unavailable = c.unavailable?.[server];
    if (unavailable)
      it(`${name}: ${unavailable.title}`, async () => {
        await unavailable.run(t());
        expect(t().calls.filter((call) => call.name === name).map((call) => call.ok), `${name} was not refused`).toEqual([false]);
      });
    else
      it(`${name}: succeeds, its body read by the row's reply schema`, async () => {
        expect(c.success, `${name} has no success case for ${server}`).toBeTypeOf('function');
        await c.success!(t());
        expect(t().calls.filter((call) => call.name === name && call.ok), `the case never called ${name} successfully`).not.toHaveLength(0);
      });
    if (!withErrors) continue;
    for (const [title, run] of Object.entries(c.errors)) {
      it(`${name}: ${title}`, async () => {
        await run(t());
        expect(t().calls.filter((call) => call.name === name && !call.ok), `${name} was never refused`).not.toHaveLength(0);
      });
    }
  }
  if (!withErrors) return;
  it('every operation with an account: an unknown one is refused with 404 invalid_account, changing nothing (§1.4)', async () => {
    const outcomes: Record<string, unknown> = {};
    const expected: Record<string, unknown> = {};
    for (const name of withAccount) {
      const ghost = { ...(CASES[name] as Case<OperationName>).args(), account: 'Sim999' } as ArgsOf<typeof name>;
      const error = await refusal(t().call(name, ghost));
      outcomes[name] = { status: error.status, body: error.body };
      // A route the simulator does not model answers 501 whatever its args (§2).
      expected[name] =
        OPERATIONS[name].notSimulated && t().server !== 'double'
          ? { status: 501, body: expect.objectContaining({ error: 'not_implemented' }) }
          : { status: 404, body: { success: false, error: 'invalid_account', detail: 'Account Sim999 not found' } };
    }
    expect(outcomes).toEqual(expected);
    expect((await t().call('GetAllPositions', { includeFlat: true })).value.positions).toEqual([]);
  });
}

for (const [server, transport] of BASE) {
  describe(`every operation, ${server === 'embedded' ? 'embedded' : `${transport} against ${server === 'serve' ? 'trade serve' : 'the reference double'}`}`, () => {
    let target: Target;
    beforeAll(async () => {
      target = await open(server, transport);
    });
    afterAll(async () => {
      await target?.close();
    });
    beforeEach(() => target.reset());
    generate(() => target, server, true);
  });
}

for (const [transport, options] of VARIANTS) {
  describe(`every operation, ${transport} against the reference double answering with ${variantTitle(options)}`, () => {
    let target: Target;
    beforeAll(async () => {
      target = await open('double', transport, options);
    });
    afterAll(async () => {
      await target?.close();
    });
    beforeEach(() => target.reset());
    generate(() => target, 'double', false);
  });
}

interface Outcome {
  error: string;
  exitCode: number;
  outcomeUnknown?: boolean;
  /** Requests the service saw for the call. */
  requests?: number;
}

/** Each row called once with its args, all at once; what came of each. */
async function everyRow(backend: Backend, seen?: (name: OperationName) => number): Promise<Record<string, Outcome | 'ok'>> {
  const results = await Promise.all(
    OPERATION_NAMES.map(async (name) => {
      const outcome = await backend.call(name, (CASES[name] as Case<OperationName>).args() as ArgsOf<typeof name>).then(
        (): Outcome | 'ok' => 'ok',
        (error: unknown): Outcome => ({
          error: (error as Error).constructor.name,
          exitCode: (error as { exitCode: number }).exitCode,
          ...(error instanceof NetworkError ? { outcomeUnknown: error.outcomeUnknown } : {}),
        }),
      );
      return [name, outcome !== 'ok' && seen ? { ...outcome, requests: seen(name) } : outcome] as const;
    }),
  );
  return Object.fromEntries(results);
}

/** What the double does for a row it does not serve, whatever it is told: 404 route (or unknown RPC), a refusal. */
const unserved: Outcome = { error: 'RejectedError', exitCode: 1, requests: 0 };
const table = (outcome: (name: OperationName) => Outcome | 'ok') => Object.fromEntries(OPERATION_NAMES.map((name) => [name, outcome(name)]));

describe.each(['http', 'ws'] as const)('what every operation can get from the service (§6), over %s', (transport) => {
  let double: ReferenceDouble;
  let harness: Harness;
  const backends: Backend[] = [];
  const backend = (options: { token?: string; timeoutMs?: number; target?: 'double' | 'serve'; server?: Harness } = {}) => {
    const server = options.target === 'serve' ? { url: (options.server ?? harness).url, wsUrl: (options.server ?? harness).wsUrl, token: TOKEN } : double;
    const remote = { token: options.token ?? server.token, timeoutMs: options.timeoutMs ?? 5000, baseUrl: server.url };
    const made = transport === 'http' ? createHttpBackend(remote) : createWsBackend({ ...remote, wsUrl: server.wsUrl });
    backends.push(made);
    return made;
  };
  const requestsFor = (name: OperationName) => double.requests.filter((r) => r.api === name).length;

  beforeAll(async () => {
    double = await startReferenceDouble({ accounts: [A, B], prices: PRICES });
    harness = await startServer();
    harness.engine.setPrice(ES, 5000);
  });
  afterAll(async () => {
    await Promise.all(backends.map((b) => b.close()));
    await double.close();
    await harness.close();
  });
  beforeEach(() => double.reset());

  it('a bad token (401): a configuration error (exit 3) for every row, from the double and from trade serve; nothing done', async () => {
    const refused = { error: 'ConfigError', exitCode: 3 };
    expect(await everyRow(backend({ token: 'wrong-token-0123456789' }))).toEqual(table(() => refused));
    expect(await everyRow(backend({ target: 'serve', token: 'wrong-token-0123456789' }))).toEqual(table(() => refused));
    expect(double.requests).toEqual([]);
    expect(harness.snapshot().orders).toEqual([]);
  });

  it('a platform that is not connected (408): over HTTP outcome unknown (exit 4) when the row moves money; one request each, never resent', async () => {
    double.configure({ disconnected: true });
    const outcomes = await everyRow(backend(), requestsFor);
    expect(outcomes).toEqual(
      table((name) => {
        if (!DOUBLE_OPERATIONS.includes(name)) return unserved;
        // Served by CrossTrade itself, not the add-on (§3.16).
        if (name === 'GetWatermarks') return 'ok';
        // Over WebSocket the status is not carried (§5.3): a readable failure is a refusal, never "outcome unknown".
        if (transport === 'ws') return { error: 'RejectedError', exitCode: 1, requests: 1 };
        return { error: 'NetworkError', exitCode: 4, outcomeUnknown: OPERATIONS[name].movesMoney, requests: 1 };
      }),
    );
    double.configure({ disconnected: false });
    expect((await backend().call('GetAllPositions', { includeFlat: true })).value.positions).toEqual([]);
  });

  it('a reply that never comes (timeout): outcome unknown (exit 4) for every row that moves money; one request each, never resent', async () => {
    double.configure({ stall: true });
    const outcomes = await everyRow(backend({ timeoutMs: 400 }), requestsFor);
    expect(outcomes).toEqual(
      table((name) => {
        if (!DOUBLE_OPERATIONS.includes(name)) return unserved;
        if (name === 'GetWatermarks') return 'ok';
        return { error: 'NetworkError', exitCode: 4, outcomeUnknown: OPERATIONS[name].movesMoney, requests: 1 };
      }),
    );
    expect(double.requests.every((r) => r.status === 0 || r.api === 'GetWatermarks')).toBe(true);
  });

  it('the rate limit (429): rate limited (exit 5) for every row, nothing done; from the double and from trade serve', async () => {
    double.configure({ rateLimit: { perSecond: 0, burst: 0 } });
    const limited = { error: 'RateLimitedError', exitCode: 5 };
    expect(await everyRow(backend(), requestsFor)).toEqual(table((name) => (DOUBLE_OPERATIONS.includes(name) ? { ...limited, requests: 1 } : unserved)));
    expect(double.requests.every((r) => r.status === 429)).toBe(true);
    // trade serve with a bucket that never refills; a WebSocket's upgrade takes the one token, an HTTP request spends it first.
    const server = await startServer({ rateLimit: { count: 3, periodMs: 1_000, burst: 1 }, now: () => 0 });
    try {
      const client = backend({ target: 'serve', server });
      if (transport === 'http') await client.call('ListAccounts', {});
      const before = server.snapshot();
      expect(await everyRow(client)).toEqual(table(() => limited));
      expect(server.snapshot()).toEqual(before);
    } finally {
      await server.close();
    }
  });
});

describe('the operation table, walked', () => {
  it('every row has a route in the catalog, WebSocket names that reach it, a simulator handler and its cases in this suite', () => {
    expect(Object.keys(CASES).sort()).toEqual([...OPERATION_NAMES].sort());
    for (const name of OPERATION_NAMES) {
      const row = OPERATIONS[name] as OperationSpec;
      expect(CATALOG, name).toContain(`${row.method} /v1/api${row.path}`);
      expect(row.ws.length, name).toBeGreaterThan(0);
      for (const ws of row.ws) expect(operationForWsName(ws), `${name}: ${ws}`).toBeDefined();
      const sample = (CASES[name] as Case<OperationName>).args() as Record<string, unknown>;
      expect(operationForRpc(wsApiFor(name, sample as never), sample), `${name}: the client's WebSocket name reaches another row`).toBe(name);
      expect(SIMULATOR[name], name).toBeTypeOf('function');
      const c = CASES[name] as Case<OperationName>;
      // A row succeeds somewhere, or says on which server it cannot and what that server answers.
      expect(typeof c.success === 'function' || Object.keys(c.unavailable ?? {}).length === 3, name).toBe(true);
    }
  });

  it('the double serves every row but those it says it leaves out, and nothing else, on the same routes', async () => {
    expect([...DOUBLE_OPERATIONS].sort()).toEqual(OPERATION_NAMES.filter((name) => !NOT_IN_DOUBLE[name]).sort());
    // Written apart from the table, from the reference alone: its catalog must list the table's routes.
    const double = await startReferenceDouble();
    try {
      const http = createHttpBackend({ token: double.token, timeoutMs: 5000, baseUrl: double.url });
      const { body } = await http.send('GET', '/v1/api/_endpoints');
      await http.close();
      const served = OPERATION_NAMES.filter((name) => !NOT_IN_DOUBLE[name]).map((name) => `${OPERATIONS[name].method} /v1/api${OPERATIONS[name].path}`);
      expect([...(body as { endpoints: string[] }).endpoints].sort()).toEqual([...served, 'GET /v1/api/_endpoints'].sort());
    } finally {
      await double.close();
    }
  });
});
