/**
 * `trade serve`'s webhook (webhook-reference.md §1, §5, §6.2): `POST /v1/send/{id}/{secret}`
 * takes an alert message as text, with the serve token as its `key`, and runs it on the engine
 * through the one parser and runner of src/alerts/ — every order an operation of the table, in
 * the group commit of every other request. 4xx only for the route, the format and the key;
 * everything else 200 with the §1.3 body, `pending` when it cannot finish within a second. The
 * Alert History is kept in the engine's store (alerts/store.ts) and read at `/_sandbox/alerts`.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { sha256 as digest } from '../common/random.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Engine } from '../engine/engine.js';
import { simulate } from '../engine/service.js';
import type { Committer } from '../engine/committer.js';
import { AlertFailure, type Alert, interpret } from '../alerts/message.js';
import { type AlertHost, type AlertOutcome, type HeldBracket, runAlert, settleHeldBracket } from '../alerts/run.js';
import { type AlertStore, type HistoryRow, type HistoryStatus, openAlertStore } from '../alerts/store.js';
import { AlertFormatError, type Fields, readFields, redactKey } from '../alerts/syntax.js';
import { OPERATIONS } from '../service/operations.js';
import { SANDBOX_PREFIX, type Sandbox } from './sandbox/sandbox.js';
import type { Rule } from './sandbox/rules.js';
import { BODY_LIMIT } from './limits.js';
import { monotonicMs } from '../common/monotonic.js';

export const WEBHOOK_PREFIX = '/v1/send/';
/** The reply waits at most this long for the outcome; then `pending` (§1.3: TradingView gives up at 3 s). */
export const REPLY_WITHIN_MS = 1000;
/** How often timeouts and held brackets are looked at. */
const SWEEP_MS = 1000;

export interface WebhookAddress {
  id: string;
  secret: string;
}

/** `ID/SECRET` as `--webhook` takes it: two URL-safe segments. */
export function parseWebhookAddress(text: string): WebhookAddress | undefined {
  const match = /^([A-Za-z0-9_-]{1,128})\/([A-Za-z0-9_-]{8,128})$/.exec(text.trim());
  return match ? { id: match[1]!, secret: match[2]! } : undefined;
}

/** A fresh address for a run with none given: an opaque id and a 192-bit secret. */
export function generateWebhookAddress(): WebhookAddress {
  return { id: randomBytes(8).toString('hex'), secret: randomBytes(24).toString('base64url') };
}

export interface WebhookOptions {
  engine: Engine;
  committer: Committer;
  /** The serve token: the `key` every message must carry. */
  token: string;
  address: WebhookAddress;
  sandbox: Sandbox;
  scrub: (text: string) => string;
  /** The scenario rule that fired for a request is named in the request log; a drop loses the connection. */
  fired: (request: FastifyRequest, rule: Rule) => void;
  drop: (request: FastifyRequest, reply: FastifyReply) => void;
  onInternalError: (api: string, error: unknown) => void;
  /** The clock of windows, rate limits and timeouts (default: the engine's). */
  now?: () => Date;
  replyWithinMs?: number;
  /** 0: no sweep timer (tests call `sweep`). */
  sweepMs?: number;
}

export interface Webhook {
  /** `/v1/send/ID/SECRET` */
  path: string;
  store: AlertStore;
  /** Cancels the timed-out orders and places the brackets whose entries filled. */
  sweep(): Promise<void>;
  /** Alerts still running (a delay, a slow clone) have finished. */
  idle(): Promise<void>;
  close(): Promise<void>;
}

/** Equal, in a time that does not tell where they differ, nor how long the expected one is. */
const same = (offered: string, expected: Buffer) => timingSafeEqual(digest(offered), expected);
const hex32 = () => randomBytes(16).toString('hex');

class StoppedError extends AlertFailure {
  constructor() {
    super('rejected', 'trade serve stopped before the alert ran; nothing was done');
  }
}

export async function registerWebhook(app: FastifyInstance, options: WebhookOptions): Promise<Webhook> {
  const { engine, committer, sandbox, scrub } = options;
  const now = options.now ?? (() => engine.now());
  const store = openAlertStore(engine.file, now);
  const expectedId = digest(options.address.id);
  const expectedSecret = digest(options.address.secret);
  const expectedKey = digest(options.token);
  const path = `${WEBHOOK_PREFIX}${options.address.id}/${options.address.secret}`;
  const running = new Set<Promise<unknown>>();
  const sleepers = new Set<() => void>();
  let closed = false;

  const track = <T>(work: Promise<T>): Promise<T> => {
    running.add(work);
    void work.finally(() => running.delete(work)).catch(() => undefined);
    return work;
  };

  const host: Omit<AlertHost, 'onPending'> = {
    async call(name, args) {
      const { body } = await committer.inOrder(() => simulate(engine, name, args), OPERATIONS[name].movesMoney);
      return { body, value: body };
    },
    now,
    sleep: (ms) =>
      new Promise<void>((resolve, reject) => {
        if (closed) return reject(new StoppedError());
        const stop = () => {
          clearTimeout(timer);
          sleepers.delete(stop);
          reject(new StoppedError());
        };
        const timer = setTimeout(() => {
          sleepers.delete(stop);
          resolve();
        }, ms);
        sleepers.add(stop);
      }),
    killSwitch: () => store.killSwitch(),
    setKillSwitch: (on) => store.setKillSwitch(on),
    takeRate: (id, count, windowMs) => store.takeRate(id, count, windowMs, now().getTime()),
    locks: {
      owner: (account, instrument) => store.lockOwner(account, instrument),
      claim: (account, instrument, tag) => store.claimLock(account, instrument, tag),
      release: (account, instrument) => store.releaseLock(account, instrument),
    },
    cancelAfter: (account, orderId, dueMs) => store.addTimer({ kind: 'cancel_after', dueMs, account, orderId }),
    holdBracket: (held: HeldBracket) => store.addTimer({ kind: 'bracket', dueMs: 0, account: held.account, orderId: held.orderId, data: JSON.stringify(held) }),
  };

  /** One Alert History row, its key never in it, nor the token in any form. */
  const record = (row: HistoryRow) => {
    try {
      store.putHistory(JSON.parse(scrub(JSON.stringify(row))) as HistoryRow);
    } catch (error) {
      options.onInternalError('Webhook (Alert History)', error);
    }
  };

  /** A row per account clone (§6.2); the clones of one message share its id as their `multiAccountId`. */
  const rowId = (alertId: string, i: number, multi: boolean) => (multi ? `${alertId.slice(0, 29)}${String(i).padStart(3, '0')}` : alertId);

  function pendingRows(base: Omit<HistoryRow, 'id' | 'status' | 'orderIds' | 'durationMs'>, alertId: string, accounts: string[], started: number): HistoryRow[] {
    const durationMs = Math.round(monotonicMs() - started);
    const multi = accounts.length > 1;
    return (accounts.length ? accounts : [base.account]).map((account, i) => ({
      ...base,
      id: rowId(alertId, i, multi),
      ...(multi ? { multiAccountId: alertId } : {}),
      ...(account === undefined ? {} : { account }),
      status: 'pending' as const,
      orderIds: [],
      durationMs,
    }));
  }

  function rowsOf(base: Omit<HistoryRow, 'id' | 'status' | 'orderIds' | 'durationMs'>, alertId: string, outcome: AlertOutcome, status: HistoryStatus, started: number): HistoryRow[] {
    const durationMs = Math.round(monotonicMs() - started);
    if (outcome.results.length === 0)
      return [{ ...base, id: alertId, status, orderIds: [], durationMs, ...(outcome.error ? { error: outcome.error, detail: outcome.detail } : {}) }];
    const multi = outcome.results.length > 1;
    return outcome.results.map((result, i) => ({
      ...base,
      id: rowId(alertId, i, multi),
      ...(multi ? { multiAccountId: alertId } : {}),
      status: result.status,
      account: result.account ?? base.account,
      instrument: result.instrument ?? base.instrument,
      orderIds: result.orderIds,
      durationMs,
      forwardedAt: now().toISOString(),
      ...(result.error ? { error: result.error, detail: result.detail } : result.detail ? { warning: result.detail } : {}),
    }));
  }

  /** The 200 body (§1.3 [decision]). */
  function replyOf(alertId: string, outcome: AlertOutcome | undefined, command: string | undefined, pending: boolean) {
    if (pending) return { success: true, alertId, status: 'pending', command: command ?? null, results: [] };
    const o = outcome!;
    const success = o.status !== 'failed';
    const warnings = [...o.warnings, ...o.results.filter((r) => r.status === 'warning' && r.detail).map((r) => r.detail!)];
    return {
      success,
      alertId,
      status: o.status,
      command: o.command,
      ...(o.error ? { error: o.error, detail: o.detail } : {}),
      results: o.results.map((r) => ({
        account: r.account ?? null,
        status: r.status,
        orderIds: r.orderIds,
        ...(r.error ? { error: r.error } : {}),
        ...(r.detail ? { detail: r.detail } : {}),
      })),
      ...(warnings.length ? { warning: [...new Set(warnings)].join('; ') } : {}),
    };
  }

  async function handle(request: FastifyRequest, reply: FastifyReply) {
    const started = monotonicMs();
    const receivedAt = now().toISOString();
    const params = request.params as { webhookId?: string; webhookSecret?: string };
    // Both segments, each compared whole and in constant time (§1.1 [decision]).
    const idOk = same(params.webhookId ?? '', expectedId);
    const secretOk = same(params.webhookSecret ?? '', expectedSecret);
    if (!idOk || !secretOk) return reply.code(404).send({ success: false, error: 'not_found' });
    let text = typeof request.body === 'string' ? request.body : '';
    if (text.startsWith('\ufeff')) text = text.slice(1);
    const raw = redactKey(text);
    // The request log keeps the message as Alert History does: its key replaced.
    (request as { body: unknown }).body = raw;
    let fields: Fields | undefined;
    let formatError: AlertFormatError | undefined;
    try {
      fields = readFields(text);
    } catch (error) {
      if (!(error instanceof AlertFormatError)) throw error;
      formatError = error;
    }
    const rule = sandbox.rules.active
      ? sandbox.rules.fire({ operation: 'Webhook', transport: 'http', account: fields?.values.account, instrument: fields?.values.instrument })
      : undefined;
    if (rule) {
      options.fired(request, rule);
      const effect = rule.effect;
      if (effect.kind === 'status') {
        const injected = sandbox.statusReply(effect);
        return reply.code(injected.status).headers(injected.headers).send(injected.body);
      }
      if (effect.kind === 'drop-before') return options.drop(request, reply);
      if (effect.kind === 'delay') await new Promise((resolve) => setTimeout(resolve, effect.ms));
    }
    const { key: _key, ...shownFields } = fields?.values ?? {};
    const base = {
      receivedAt,
      raw,
      fields: shownFields,
      ignoredFields: [] as string[],
      command: shownFields.command?.toUpperCase(),
      account: shownFields.account,
      instrument: shownFields.instrument,
      ...(shownFields.notes ? { notes: shownFields.notes.slice(0, 500) } : {}),
    };
    const answer = async (status: number, body: unknown) => {
      if (rule?.effect.kind === 'drop-after') return options.drop(request, reply);
      return reply.code(status).send(body);
    };
    if (formatError) {
      record({ ...base, id: hex32(), status: 'failed', orderIds: [], durationMs: 0, error: 'invalid_format', detail: formatError.detail });
      return answer(400, { success: false, error: 'invalid_format', detail: formatError.detail });
    }
    const key = fields!.values.key;
    if (key === undefined || !same(key, expectedKey)) {
      record({ ...base, id: hex32(), status: 'failed', orderIds: [], durationMs: 0, error: 'invalid_secret_key', detail: 'invalid or missing key' });
      return answer(401, { success: false, error: 'invalid_secret_key' });
    }
    const alertId = hex32();
    let alert: Alert;
    try {
      alert = interpret(fields!, { now: now() });
    } catch (error) {
      if (!(error instanceof AlertFailure)) throw error;
      // §5: the kill switch is judged before the message's own values.
      const failure = fields!.values.kill_switch === undefined && store.killSwitch() ? new AlertFailure('kill_switch_on', 'Kill switch is on; alert not processed') : error;
      const outcome: AlertOutcome = { status: 'failed', command: base.command ?? 'UNKNOWN', results: [], error: failure.code, detail: failure.detail, warnings: [] };
      record(rowsOf(base, alertId, outcome, 'failed', started)[0]!);
      return answer(200, replyOf(alertId, outcome, base.command, false));
    }
    const known = { ...base, ignoredFields: alert.ignoredFields, command: alert.kind === 'command' ? alert.command : 'KILL_SWITCH', ...(alert.kind === 'command' ? { instrument: alert.instrument ?? base.instrument } : {}) };
    let signalPending!: () => void;
    const pendingSignal = new Promise<'pending'>((resolve) => (signalPending = () => resolve('pending')));
    const run = track(
      runAlert(alert, { ...host, onPending: signalPending }, { alertId }).then(
        (outcome) => {
          for (const row of rowsOf(known, alertId, outcome, outcome.status, started)) record(row);
          return outcome;
        },
        (error: unknown) => {
          if (!(error instanceof AlertFailure)) options.onInternalError('Webhook', error);
          const detail = error instanceof AlertFailure ? error.detail : 'trade serve failed unexpectedly; the cause is on its stderr';
          const outcome: AlertOutcome = { status: 'failed', command: known.command, results: [], error: 'rejected', detail, warnings: [] };
          for (const row of rowsOf(known, alertId, outcome, 'failed', started)) record(row);
          return outcome;
        },
      ),
    );
    const timer = new Promise<'pending'>((resolve) => setTimeout(() => resolve('pending'), options.replyWithinMs ?? REPLY_WITHIN_MS).unref());
    const first = await Promise.race([run, pendingSignal, timer]);
    if (first === 'pending') {
      // The rows say pending until the run records its outcome (unless it already has).
      if (!store.history({ limit: 50 }).some((r) => r.id === alertId || r.multiAccountId === alertId))
        for (const row of pendingRows(known, alertId, alert.kind === 'command' ? alert.accounts : [], started)) record(row);
      return answer(200, replyOf(alertId, undefined, known.command, true));
    }
    return answer(200, replyOf(alertId, first, known.command, false));
  }

  await app.register(async (scope) => {
    // The message is text, whatever its Content-Type (TradingView's depends on the text, §1.1).
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: BODY_LIMIT }, (_request, body, done) => done(null, body));
    const config = { operation: 'Webhook', webhook: true };
    scope.post(`${WEBHOOK_PREFIX}:webhookId/:webhookSecret`, { config }, handle);
    scope.route({
      method: ['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'],
      url: `${WEBHOOK_PREFIX}:webhookId/:webhookSecret`,
      config,
      handler: async (_request, reply) => reply.code(405).header('allow', 'POST').send({ success: false, error: 'method_not_allowed', detail: 'the webhook takes POST' }),
    });
    scope.all(`${WEBHOOK_PREFIX}*`, { config }, async (_request, reply) => reply.code(404).send({ success: false, error: 'not_found' }));
  });

  app.get(`${SANDBOX_PREFIX}alerts`, async (request, reply) => {
    const query = (request.query ?? {}) as { status?: string; limit?: string };
    const statuses = ['success', 'pending', 'warning', 'failed'];
    if (query.status !== undefined && !statuses.includes(query.status))
      return reply.code(400).send({ error: `Invalid request: status: must be one of ${statuses.join(', ')}, got '${query.status}'` });
    const limit = query.limit === undefined ? undefined : /^\d{1,5}$/.test(query.limit) ? Number(query.limit) : NaN;
    if (limit !== undefined && !(limit >= 1 && limit <= 10_000)) return reply.code(400).send({ error: 'Invalid request: limit: must be a whole number from 1 to 10000' });
    const alerts = store.history({ status: query.status as HistoryStatus | undefined, limit });
    return JSON.parse(scrub(JSON.stringify({ alerts, count: alerts.length, success: true }))) as unknown;
  });

  let sweeping: Promise<void> | undefined;
  async function sweepOnce(): Promise<void> {
    for (const timer of store.dueTimers(now().getTime())) {
      if (closed) return;
      try {
        if (timer.kind === 'cancel_after') {
          const status = (await host.call('GetOrderStatus', { account: timer.account, orderId: timer.orderId })).value as { status?: string };
          if (!['Filled', 'Cancelled', 'Rejected'].includes(status.status ?? '')) await host.call('Cancel', { account: timer.account, orderId: timer.orderId });
          store.removeTimer(timer.seq);
        } else if ((await settleHeldBracket(JSON.parse(timer.data!) as HeldBracket, host)) !== 'waiting') {
          store.removeTimer(timer.seq);
        }
      } catch (error) {
        // An order the engine no longer has (a reset, a restore) leaves nothing to do.
        if (error instanceof Error && 'status' in error) store.removeTimer(timer.seq);
        else options.onInternalError(`Webhook (${timer.kind})`, error);
      }
    }
  }
  const sweep = () => (sweeping ??= sweepOnce().finally(() => (sweeping = undefined)));
  const sweepMs = options.sweepMs ?? SWEEP_MS;
  const interval = sweepMs > 0 ? setInterval(() => void sweep(), sweepMs).unref() : undefined;

  return {
    path,
    store,
    sweep,
    async idle() {
      while (running.size > 0) await Promise.allSettled([...running]);
    },
    async close() {
      closed = true;
      if (interval) clearInterval(interval);
      for (const stop of [...sleepers]) stop();
      await Promise.allSettled([...running]);
      await sweeping;
      store.close();
    },
  };
}
