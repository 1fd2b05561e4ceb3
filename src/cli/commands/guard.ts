/**
 * The guard's commands: `trade halt`, `trade resume`, `trade guard show|test|reset`,
 * `trade history` and `trade reconcile` (src/guard/).
 */
import type { Backend } from '../../backends/types.js';
import type { GuardedBackend } from '../../guard/guard.js';
import { initLedger, type JournalLine, type Ledger, ledgerWhere, openLedger } from '../../guard/ledger.js';
import { anyRuleSet, GUARD_RULES, type HaltMode } from '../../guard/rules.js';
import { parseDuration } from '../../guard/rules.js';
import { NetworkError, RejectedError, UsageError } from '../../common/errors.js';
import { parseAccountName } from '../../service/order.js';
import { type CommandContext, using } from '../context.js';
import { table } from '../io.js';
import { orderFromFlags, type OrderCommandOptions } from './place.js';
import { sessionTime } from '../session-time.js';

interface JsonOption {
  json?: boolean;
}

/** Where the ledger is, for messages: the file, or the desk's URL without its password. */
const ledgerName = async (ctx: CommandContext) => ledgerWhere(await ctx.ledgerSpec());
async function withLedger<T>(ctx: CommandContext, use: (ledger: Ledger) => Promise<T>): Promise<T> {
  const ledger = await openLedger(await ctx.ledgerSpec());
  try {
    return await use(ledger);
  } finally {
    await ledger.close();
  }
}

async function scopeOf(ctx: CommandContext, account: string | undefined): Promise<string> {
  if (account !== undefined) return `account:${parseAccountName(account)}`;
  return `profile:${(await ctx.settings()).profile}`;
}

const scopeWords = (scope: string) => scope.replace(/^account:/, 'account ').replace(/^profile:/, 'profile ');

export async function runHalt(ctx: CommandContext, options: JsonOption & { reason?: string; account?: string; reducing?: boolean }): Promise<void> {
  const scope = await scopeOf(ctx, options.account);
  const mode: HaltMode = options.reducing ? 'reducing' : 'halted';
  const at = (await sessionTime(ctx)).toISOString();
  await withLedger(ctx, (ledger) => ledger.setHalt(scope, mode, options.reason, at));
  if (options.json) return ctx.io.out(JSON.stringify({ halt: { scope, mode, reason: options.reason ?? null, at }, success: true }));
  ctx.io.out(
    `${scopeWords(scope)} is ${mode === 'halted' ? 'HALTED: no new order from any trade process' : 'REDUCING: only orders that reduce a position'}` +
      `${options.reason ? ` (${options.reason})` : ''}; cancel, close and flatten still work. trade resume lifts it.`,
  );
}

export async function runResume(ctx: CommandContext, options: JsonOption & { account?: string }): Promise<void> {
  const scope = await scopeOf(ctx, options.account);
  const today = await sessionTime(ctx);
  const { sessionEnd } = await import('../../service/session.js');
  const removed = await withLedger(ctx, (ledger) =>
    ledger.exclusive(async (tx) => {
      const n = await tx.clearHalt(scope);
      // A daily-loss latch of the account is lifted for the rest of its trading day.
      const account = scope.startsWith('account:') ? scope.slice('account:'.length) : undefined;
      let loss = false;
      if (account !== undefined) {
        const day = sessionEnd(today).toISOString().slice(0, 10);
        loss = (await tx.lossDay(account, day)) === 'latched';
        if (loss) await tx.setLossDay(account, day, 'resumed');
      }
      return { halt: n > 0, loss };
    }),
  );
  if (options.json) return ctx.io.out(JSON.stringify({ scope, resumed: removed.halt || removed.loss, success: true }));
  if (!removed.halt && !removed.loss) return ctx.io.out(`${scopeWords(scope)} was not halted.`);
  ctx.io.out(`${scopeWords(scope)} resumed${removed.loss ? ' (its daily-loss halt is lifted for the rest of the trading day)' : ''}.`);
}

/**
 * What `trade guard show` reports, and the MCP GuardStatus tool: the rules of the profile, the
 * halts, and the headroom an order has (pace sent and left per account in each window, the
 * daily-loss limit).
 */
export async function guardStatus(ctx: CommandContext) {
  const settings = await ctx.settings();
  const rules = settings.guardRules();
  const now = (await sessionTime(ctx)).getTime();
  const { halts, pace } = await withLedger(ctx, async (ledger) => ({
    halts: await ledger.allHalts(),
    pace: await Promise.all(
      (rules.maxOrders ?? []).map(async (p) => {
        const counts = await ledger.sentByAccount(now - p.ms);
        const left = Object.fromEntries(Object.entries(counts).map(([account, n]) => [account, Math.max(0, p.count - n)]));
        return { pace: p.text, limit: p.count, windowMs: p.ms, counts, left };
      }),
    ),
  }));
  return {
    profile: settings.profile,
    rules: Object.fromEntries(GUARD_RULES.filter((r) => rules.texts[r] !== undefined).map((r) => [r, { value: rules.texts[r], source: rules.sources[r] }])),
    halts,
    pace,
    headroom: {
      maxOrderQty: rules.maxOrderQty ?? null,
      maxPosition: rules.maxPosition ?? null,
      dailyLoss: rules.dailyLoss === undefined ? null : -rules.dailyLoss,
    },
    ledger: await ledgerName(ctx),
    rulesSet: anyRuleSet(rules),
  };
}

export async function runGuardShow(ctx: CommandContext, options: JsonOption): Promise<void> {
  const status = await guardStatus(ctx);
  const { profile, halts } = status;
  if (options.json) {
    const body = { profile, rules: status.rules, halts, pace: status.pace.map(({ pace, counts }) => ({ pace, counts })), ledger: status.ledger, success: true };
    return ctx.io.out(JSON.stringify(body));
  }
  const rules = (await ctx.settings()).guardRules();
  const pace = status.pace;
  ctx.io.out(`Guard of profile ${profile} (ledger ${status.ledger})`);
  if (!anyRuleSet(rules)) ctx.io.out('  no rule is set (trade config set guard.max-order-qty 10, ...): every order passes, and is journaled');
  else for (const rule of GUARD_RULES) if (rules.texts[rule] !== undefined) ctx.io.out(`  ${rule.padEnd(17)} ${rules.texts[rule]}  (${rules.sources[rule]})`);
  ctx.io.out(halts.length === 0 ? 'State: ACTIVE' : `State: ${halts.map((h) => `${scopeWords(h.scope)} ${h.mode.toUpperCase()} since ${h.at}${h.reason ? ` (${h.reason})` : ''}`).join('; ')}`);
  for (const p of pace) {
    const used = Object.entries(p.counts);
    ctx.io.out(`Pace ${p.pace}: ${used.length === 0 ? 'nothing sent in the window' : used.map(([a, n]) => `${a} ${n} sent, ${p.left[a]} left`).join('; ')}`);
  }
  if (rules.dailyLoss !== undefined) ctx.io.out(`Daily loss: new risk stops at a trading day's P&L of -${rules.dailyLoss} (trade account NAME shows the P&L)`);
}

export async function runGuardTest(ctx: CommandContext, options: OrderCommandOptions & JsonOption): Promise<void> {
  const order = orderFromFlags('place', options, { account: await ctx.defaultAccount() });
  const backend = (await ctx.openBackend()) as GuardedBackend;
  const verdict = await using(backend, (b) => (b as GuardedBackend).check(options.flattenFirst ? 'FlatPlace' : 'PlaceOrder', order));
  if (options.json) {
    const body = verdict.refusal
      ? { pass: false, rule: verdict.refusal.rule, error: verdict.refusal.error, limit: verdict.refusal.limit, value: verdict.refusal.value, detail: verdict.refusal.reason, sent: false }
      : { pass: true, sent: false };
    return ctx.io.out(JSON.stringify(body));
  }
  const what = `${order.action} ${order.quantity} ${order.instrument} ${order.orderType} in ${order.account}`;
  if (verdict.refusal) ctx.io.out(`${what}: would be refused by guard ${verdict.refusal.rule}: ${verdict.refusal.reason}${verdict.refusal.source ? ` (${verdict.refusal.source})` : ''}. Nothing was sent.`);
  else ctx.io.out(`${what}: would pass the guard. Nothing was sent.`);
}

export async function runGuardReset(ctx: CommandContext, options: JsonOption): Promise<void> {
  const spec = await ctx.ledgerSpec();
  if (spec.kind !== 'sqlite')
    throw new UsageError(`trade guard reset moves this machine's SQLite ledger aside; the guard's ledger here is a desk's (${ledgerWhere(spec)}), shared by every machine: nothing was changed.`, {
      hint: "Its halts are lifted with trade resume; a damaged desk ledger is its database administrator's to repair (docs/desk-mode.md).",
    });
  const { moveAside } = await import('../../guard/sqlite-ledger.js');
  const aside = moveAside(spec.file);
  if (options.json) return ctx.io.out(JSON.stringify({ movedTo: aside ?? null, success: true }));
  ctx.io.out(aside ? `The guard's ledger was moved to ${aside}; a new, empty one starts with the next order.` : `There is no ledger at ${spec.file}.`);
}

/** `trade guard init`: the ledger's schema created or migrated (a desk's once, from any machine; safe to run again). */
export async function runGuardInit(ctx: CommandContext, options: JsonOption): Promise<void> {
  const spec = await ctx.ledgerSpec();
  const done = await initLedger(spec);
  if (options.json) return ctx.io.out(JSON.stringify({ ledger: done.where, kind: spec.kind, schemaVersion: done.version, from: done.from, success: true }));
  const what = done.from === done.version ? `was already at schema ${done.version}` : done.from === 0 ? `was created (schema ${done.version})` : `was migrated from schema ${done.from} to ${done.version}`;
  ctx.io.out(`The guard's ledger ${done.where} ${what}.`);
}

/** `1h`, `30m`, `2d` before `now`, or an ISO time. */
function sinceOf(raw: string | undefined, now: number): string | undefined {
  if (raw === undefined) return undefined;
  if (/^\d{4}-\d{2}-\d{2}/.test(raw)) {
    const time = new Date(raw);
    if (Number.isNaN(time.getTime())) throw new UsageError(`--since must be a duration like 1h or an ISO time, got '${raw}'`);
    return time.toISOString();
  }
  try {
    return new Date(now - parseDuration(raw)).toISOString();
  } catch (error) {
    throw new UsageError(`--since ${(error as Error).message}`);
  }
}

export async function runHistory(ctx: CommandContext, options: JsonOption & { since?: string; account?: string; unknown?: boolean; refused?: boolean }): Promise<void> {
  const since = sinceOf(options.since, options.since === undefined ? 0 : (await sessionTime(ctx)).getTime());
  const account = options.account === undefined ? undefined : parseAccountName(options.account);
  const wanted: JournalLine['outcome'][] | undefined =
    options.unknown || options.refused ? [...(options.unknown ? (['unknown'] as const) : []), ...(options.refused ? (['refused'] as const) : [])] : undefined;
  const spec = await ctx.ledgerSpec();
  const lines = await withLedger(ctx, (ledger) => ledger.lines({ since, account, outcomes: wanted }));
  if (options.json) {
    const entries = lines.map((l) => ({
      id: l.id, at: l.at, profile: l.profile, backend: l.backend, source: l.source, operation: l.operation, account: l.account,
      instrument: l.instrument, request: JSON.parse(l.request) as unknown, clientOrderId: l.client_order_id, outcome: l.outcome,
      orderId: l.order_id, message: l.message, rule: l.rule, doneAt: l.done_at, machine: l.machine,
    }));
    return ctx.io.out(JSON.stringify({ entries, count: entries.length, success: true }));
  }
  if (lines.length === 0)
    return ctx.io.out(options.unknown && options.refused ? 'No request was refused or has an unknown outcome.' : options.unknown ? 'No request has an unknown outcome.' : options.refused ? 'No request was refused.' : 'No request in the journal.');
  const desk = spec.kind === 'postgres';
  const rows = lines.map((l) => {
    const r = JSON.parse(l.request) as Record<string, unknown>;
    const order = r.action !== undefined ? `${String(r.action)} ${String(r.quantity)} ${String(r.orderType ?? '')}`.trim() : '';
    return [
      String(l.id), l.at.replace('T', ' ').slice(0, 19), ...(desk ? [l.machine ?? '—'] : []), l.source, l.operation, l.account ?? '—', l.instrument ?? '—', order || '—',
      l.outcome === 'refused' ? `refused (${l.rule})` : l.outcome, l.order_id ?? l.message?.slice(0, 60) ?? '',
    ];
  });
  // A desk's journal: every machine's lines, each with its machine's name.
  const head = ['ID', 'TIME (UTC)', ...(desk ? ['MACHINE'] : []), 'SOURCE', 'OPERATION', 'ACCOUNT', 'INSTRUMENT', 'ORDER', 'OUTCOME', 'ORDER ID / MESSAGE'];
  for (const line of table(head, rows)) ctx.io.out(line);
}

/**
 * Each request whose outcome is unknown, asked about: an order sent with a client order id is
 * looked up by it (GetOrderStatus); found, it was placed (accepted); not found, it never was
 * (rejected, "not placed"). A request without a client id cannot be looked up and stays unknown.
 */
export async function runReconcile(ctx: CommandContext, options: JsonOption): Promise<void> {
  const unknown = await withLedger(ctx, (ledger) => ledger.lines({ outcomes: ['unknown'] }));
  const results: Array<{ id: number; operation: string; outcome: string; orderId?: string; state?: string; message?: string }> = [];
  if (unknown.length > 0) {
    const backend: Backend = await ctx.openBackend();
    await using(backend, async (b) => {
      for (const line of unknown) {
        if (!line.client_order_id || !line.account) {
          results.push({ id: line.id, operation: line.operation, outcome: 'unknown', message: 'sent without a client order id: check with trade orders' });
          continue;
        }
        try {
          const status = await b.call('GetOrderStatus', { account: line.account, orderId: line.client_order_id });
          // §3.10: `{"status": "Filled", ...}`.
          const state = String((status.value as { status?: unknown }).status ?? 'unknown state');
          results.push({ id: line.id, operation: line.operation, outcome: 'accepted', orderId: line.client_order_id, state });
        } catch (error) {
          if (error instanceof RejectedError && (error.status === 404 || /not found/i.test(error.message)))
            results.push({ id: line.id, operation: line.operation, outcome: 'rejected', message: `not placed: the service has no order with its client id (${error.message})` });
          // Any other refusal (the generic "Invalid request" of §6.2 included) does not say the
          // order is absent: it stays unknown, with what the service said.
          else if (error instanceof RejectedError)
            results.push({ id: line.id, operation: line.operation, outcome: 'unknown', message: `still unknown: the service answered "${error.message}" for its client id; check with trade orders` });
          else if (error instanceof NetworkError) results.push({ id: line.id, operation: line.operation, outcome: 'unknown', message: `still unknown: ${error.message}` });
          else throw error;
        }
      }
    });
    await withLedger(ctx, (ledger) =>
      ledger.exclusive(async (tx) => {
        const at = new Date().toISOString();
        for (const r of results)
          if (r.outcome !== 'unknown') await tx.settle(r.id, r.outcome as 'accepted' | 'rejected', { orderId: r.orderId, message: r.message ?? (r.state ? `reconciled: ${r.state}` : undefined), at });
          else await tx.settle(r.id, 'unknown', { message: r.message, at });
      }),
    );
  }
  if (options.json) return ctx.io.out(JSON.stringify({ reconciled: results, count: results.length, success: true }));
  if (results.length === 0) return ctx.io.out('No request has an unknown outcome.');
  for (const r of results)
    ctx.io.out(`#${r.id} ${r.operation}: ${r.outcome === 'accepted' ? `placed (order ${r.orderId}, ${r.state})` : r.outcome === 'rejected' ? r.message : r.message}`);
}
