/**
 * `trade watch quotes|pnl|orders`: one line per update on stdout until Ctrl-C (SIGINT) or
 * SIGTERM, which end it with exit 0 and the connection closed cleanly (a WebSocket close frame).
 * `--json` prints NDJSON: a Quote object, a pnlUpdate event or an Order object per line. Where
 * the updates come from on each backend is watch-feeds.ts's business.
 */
import { parseAll, UsageError } from '../../common/errors.js';
import { stripInvisible as shown } from '../../config/redact.js';
import { parseAccountName, parseInstrument } from '../../service/order.js';
import type { PnlAccountRead, PnlUpdateRead } from '../../service/events.js';
import type { ExecutionRead, OrderRead, QuoteRead } from '../../service/shapes.js';
import { using, type CommandContext } from '../context.js';
import { describeObject, formatMoney, formatPrice, orderStatus } from '../format.js';
import type { OutputStream } from '../io.js';
import { type StopWhen, untilSignal } from '../signals.js';
import type { FeedContext } from '../watch-feeds.js';

export interface WatchOptions {
  json?: boolean;
  /** pnl: milliseconds between updates. */
  interval?: string;
  /** orders, executions: only this account. */
  account?: string;
  /** executions: every account, whatever the default. */
  allAccounts?: boolean;
}

export interface WatchDeps {
  /** Tests stop a watch their own way; by default SIGINT or SIGTERM does. */
  stopWhen?: StopWhen;
}

export const PNL_INTERVAL_MS = { default: 1_000, min: 250, max: 60_000 } as const;

/**
 * Resolves when stdout's reader has gone (`trade watch quotes ES | head -1`): the updates would go
 * nowhere, so the watch ends as a pipeline expects. Node reports it as EPIPE on the next write.
 */
function untilStdoutGone(stdout: OutputStream): { gone: Promise<string>; dispose(): void } {
  const stream = stdout as OutputStream & Partial<Pick<NodeJS.EventEmitter, 'on' | 'off'>>;
  let onError: (error: NodeJS.ErrnoException) => void = () => undefined;
  const gone = new Promise<string>((resolve) => {
    onError = (error) => {
      if (error.code === 'EPIPE') resolve('stdout closed');
    };
    stream.on?.('error', onError);
  });
  return { gone, dispose: () => stream.off?.('error', onError) };
}

/** Runs `feed` until a stop, or until it fails: then the error is the command's (only main exits). */
export async function watch(ctx: CommandContext, what: string, deps: WatchDeps, feed: (fc: FeedContext) => Promise<void>): Promise<void> {
  const stop = (deps.stopWhen ?? untilSignal)();
  const stdout = untilStdoutGone(ctx.io.stdout);
  try {
    const settings = await ctx.settings();
    const backend = await ctx.openBackend();
    await using(backend, async () => {
      const controller = new AbortController();
      const note = (line: string) => ctx.io.err(ctx.io.errColor.dim(line));
      note(`Watching ${what} on ${backend.label}. Ctrl-C stops.`);
      // Read only by a feed that waits on a service, so a bad timeout does not stop an embedded watch.
      const running = feed({ backend, signal: controller.signal, note, get timeoutMs() { return settings.timeoutMs; } });
      try {
        const reason = await Promise.race([stop.stopped, stdout.gone, running.then(() => undefined)]);
        if (reason !== undefined) note(`Stopped (${reason}).`);
      } finally {
        controller.abort();
        // A feed that failed has already said why through the race.
        await running.catch(() => undefined);
      }
    });
  } finally {
    stop.dispose();
    stdout.dispose();
  }
}

/** The backend's time: the embedded engine's clock (a replay's while one runs), else the wall clock. */
const backendNow = (fc: FeedContext) => (fc.backend as { guardFacts?: { now?(): Date } }).guardFacts?.now?.().getTime() ?? Date.now();

/** The local time of day, for lines a person scans. */
const clock = (ms: number = Date.now()) => new Date(ms).toTimeString().slice(0, 8);
const text = (value: string | undefined) => (value === undefined ? '—' : shown(value));

export function quoteLine(q: QuoteRead): string {
  return [
    shown(q.instrument),
    `last ${formatPrice(q.last)}`,
    `bid ${formatPrice(q.bid)}`,
    `ask ${formatPrice(q.ask)}`,
    `high ${formatPrice(q.high)}`,
    `low ${formatPrice(q.low)}`,
    `volume ${q.volume ?? '—'}`,
    text(q.quoteTime),
  ].join('  ');
}

function positionsText(account: PnlAccountRead): string {
  const open = (account.positions ?? []).filter((p) => p.quantity > 0);
  if (open.length === 0) return 'flat';
  return open.map((p) => `${shown(p.instrument)} ${p.marketPosition} ${p.quantity} @ ${formatPrice(p.averagePrice)}`).join(', ');
}

export function pnlLines(update: PnlUpdateRead): string[] {
  return update.accounts.map((a) =>
    [
      clock(update.epoch),
      text(a.account),
      `net liq ${formatMoney(a.netLiquidation)}`,
      `cash ${formatMoney(a.cashValue)}`,
      `realized ${formatMoney(a.realizedProfitLoss)}`,
      `unrealized ${formatMoney(a.unrealizedProfitLoss)}`,
      positionsText(a),
    ].join('  '),
  );
}

/** An order's line, stamped with `ms`: the backend's time (the engine's clock follows a replay). */
export function orderLine(o: OrderRead, ms: number = Date.now()): string {
  return [clock(ms), text(o.account), shown(o.orderId), describeObject(o), orderStatus(o)].join('  ');
}

export async function runWatchQuotes(ctx: CommandContext, rawInstruments: string[], options: WatchOptions, deps: WatchDeps = {}): Promise<void> {
  const parsed = parseAll<string[]>(
    rawInstruments.map((raw) => () => parseInstrument(raw)),
    { hint: "Nothing was sent. Run 'trade watch quotes --help' for examples." },
  );
  const instruments = [...new Set(parsed)];
  const { watchQuotes } = await import('../watch-feeds.js');
  // A quote is printed when it differs from the one printed last for its instrument: polls repeat them.
  const printed = new Map<string, string>();
  await watch(ctx, `quotes of ${instruments.join(', ')}`, deps, (fc) =>
    watchQuotes(fc, instruments, (quote, raw) => {
      // One instrument's GetQuote body carries `success`; a Quote object does not (§4.7).
      const { success: _success, ...object } = raw as Record<string, unknown>;
      const json = JSON.stringify(object);
      if (printed.get(quote.instrument) === json) return;
      printed.set(quote.instrument, json);
      ctx.io.out(options.json ? json : quoteLine(quote));
    }),
  );
}

export function parseInterval(text: string | undefined): number {
  if (text === undefined) return PNL_INTERVAL_MS.default;
  const ms = /^\s*\d+\s*$/.test(text) ? Number(text) : NaN;
  if (!(ms >= PNL_INTERVAL_MS.min && ms <= PNL_INTERVAL_MS.max))
    throw new UsageError(`--interval must be a whole number of milliseconds from ${PNL_INTERVAL_MS.min} to ${PNL_INTERVAL_MS.max}, got '${text}'`, {
      hint: "Nothing was sent. Run 'trade watch pnl --help' for examples.",
    });
  return ms;
}

export async function runWatchPnl(ctx: CommandContext, options: WatchOptions, deps: WatchDeps = {}): Promise<void> {
  const interval = parseInterval(options.interval);
  const { watchPnl, REMOTE_POLL_MS } = await import('../watch-feeds.js');
  await watch(ctx, `P&L every ${interval} ms`, deps, (fc) => {
    if (fc.backend.name === 'http' && interval < REMOTE_POLL_MS)
      fc.note(`On http each update takes two requests: one every ${REMOTE_POLL_MS} ms at most.`);
    return watchPnl(fc, interval, (update, raw) => {
      if (options.json) ctx.io.out(JSON.stringify(raw));
      else for (const line of pnlLines(update)) ctx.io.out(line);
    });
  });
}

export async function runWatchOrders(ctx: CommandContext, options: WatchOptions, deps: WatchDeps = {}): Promise<void> {
  const raw = options.account ?? (await ctx.defaultAccount());
  const [account] = parseAll<[string | undefined]>([() => (raw === undefined ? undefined : parseAccountName(raw))], {
    hint: "Nothing was sent. Run 'trade watch orders --help' for examples.",
  });
  const { watchOrders } = await import('../watch-feeds.js');
  await watch(ctx, `orders of ${account ?? 'every account'}`, deps, (fc) =>
    watchOrders(fc, account, (order, raw) => ctx.io.out(options.json ? JSON.stringify(raw) : orderLine(order, backendNow(fc)))),
  );
}

/** `09:30:05  Sim101  ES 09-25  BUY 2 @ 6000  position 2  order 2ea6…`: one execution. */
export function executionLine(e: ExecutionRead): string {
  const side = e.marketPosition === 'Long' ? 'BUY' : e.marketPosition === 'Short' ? 'SELL' : '—';
  return [
    typeof e.epoch === 'number' ? clock(e.epoch) : text(e.time),
    text(e.account),
    text(e.instrument),
    `${side} ${e.quantity ?? '—'} @ ${formatPrice(e.price)}`,
    `position ${e.position ?? '—'}`,
    `order ${text(e.orderId)}`,
    `execution ${shown(e.id)}`,
  ].join('  ');
}

/** Executions of the last 900 s, then each new one; on a remote backend each is kept in the execution history. */
export async function runWatchExecutions(ctx: CommandContext, options: WatchOptions, deps: WatchDeps = {}): Promise<void> {
  const { accountScope, showScope } = await import('../account-scope.js');
  const scope = await accountScope(ctx, options, 'watch executions');
  const { watchExecutions } = await import('../watch-feeds.js');
  await watch(ctx, `executions of ${scope.account ?? 'every account'}`, deps, (fc) => {
    showScope(ctx, scope);
    return watchExecutions(fc, scope.account === undefined ? undefined : [scope.account], 900, (execution, raw) =>
      ctx.io.out(options.json ? JSON.stringify(raw) : executionLine(execution)),
    );
  });
}
