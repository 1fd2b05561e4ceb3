/**
 * `trade alert MESSAGE|-|FILE`: TradingView alert messages (the service's webhook language,
 * src/alerts/) run as the operations they map to, on any backend, each order through the guard;
 * `--check` only parses and shows what would be sent; `--webhook` posts the text to the live
 * service's webhook instead (alert-webhook.ts).
 */
import { readFile } from 'node:fs/promises';
import { text as readText } from 'node:stream/consumers';
import type { GuardedBackend } from '../../guard/guard.js';
import { AlertFailure, type Alert, parseAlert } from '../../alerts/message.js';
import { checkedCalls, optionNotes } from '../../alerts/plan.js';
import { type AlertOutcome, type CallRecord, type CloneResult, outcomeBody, runAlert, unsupported } from '../../alerts/run.js';
import { AlertFormatError, keysIn } from '../../alerts/syntax.js';
import { createClientHost } from '../../alerts/client-host.js';
import { ExitCode, IncompleteError, NetworkError, TradeError, UsageError } from '../../common/errors.js';
import { describeOrder, type OrderBody } from '../../service/order.js';
import { envelopeData } from '../../service/shapes.js';
import { type CommandContext, using } from '../context.js';

export interface AlertOptions {
  check?: boolean;
  webhook?: boolean;
  json?: boolean;
}

export interface AlertDeps {
  now?: () => Date;
  sleep?: (ms: number) => Promise<void>;
}

/** The messages of the argument: its text, stdin's (`-`), or a file's; one per blank-line-separated block. */
export async function readMessages(ctx: CommandContext, source: string): Promise<string[]> {
  let text: string;
  let split = true;
  if (source === '-') {
    if (ctx.io.stdin.isTTY)
      throw new UsageError('trade alert - reads messages from a pipe, not from a terminal.', { hint: "Give the message as an argument: trade alert 'key=...; command=PLACE; ...'" });
    text = await readText(ctx.io.stdin);
  } else if (/[=;\n{[]/.test(source)) {
    // A message has fields (or is JSON, which the parser then names): only a plain name is a file.
    text = source;
    split = false;
  } else {
    text = await readFile(source, 'utf8').catch((error: NodeJS.ErrnoException) => {
      throw new UsageError(`Cannot read ${source}: ${error.code ?? error.message}`, {
        hint: "A message has name=value fields (key=...; command=PLACE; ...); anything else is read as a file's name.",
      });
    });
  }
  const messages = split ? text.split(/\r?\n[ \t]*\r?\n/).filter((block) => block.trim() !== '') : [text];
  if (messages.length === 0) throw new UsageError(`No alert message in ${source === '-' ? 'stdin' : source}`);
  return messages;
}

/** Every message read whole before anything is sent: the first one wrong is a usage error naming it. */
export function parseMessages(ctx: CommandContext, messages: string[], now: Date): Alert[] {
  hideKeys(ctx, messages);
  return messages.map((message, i) => {
    try {
      return parseAlert(message, { now });
    } catch (error) {
      if (error instanceof AlertFormatError || error instanceof AlertFailure) {
        const where = messages.length > 1 ? `alert ${i + 1}: ` : '';
        throw new UsageError(`${where}${error.code}: ${error.detail}`, { hint: 'Nothing was sent. docs/webhook-reference.md has the message language.' });
      }
      throw error;
    }
  });
}

/** What trade alert itself cannot apply, from the host's capabilities (no lock, no held bracket). */
const cliLimits = { locks: undefined, holdBracket: undefined };

/**
 * A message's key is the service's secret (the token): never printed, whatever echoes it (an
 * error quoting a field, a server's answer). One too short to be a secret (`key=x` in a check) is
 * left alone, or every `x` printed would be redacted.
 */
export function hideKeys(ctx: CommandContext, messages: string[]): void {
  for (const key of messages.flatMap(keysIn)) if (key.length >= 8) ctx.addSecret(key);
}

export async function runAlertCommand(ctx: CommandContext, source: string, options: AlertOptions, deps: AlertDeps = {}): Promise<void> {
  const messages = await readMessages(ctx, source);
  if (options.webhook) {
    if (options.check) throw new UsageError('--check and --webhook: give one (a check sends nothing)');
    const { sendToWebhook } = await import('./alert-webhook.js');
    return sendToWebhook(ctx, messages, options);
  }
  const now = deps.now ?? (() => new Date());
  const alerts = parseMessages(ctx, messages, now());
  if (options.check) return printCheck(ctx, alerts, options);
  alerts.forEach((alert, i) => {
    const why = unsupported(alert, cliLimits);
    if (why)
      throw new UsageError(`${alerts.length > 1 ? `alert ${i + 1}: ` : ''}trade alert cannot apply this message: ${why}.`, {
        hint: 'Nothing was sent. `trade alert --webhook` sends it to the service\'s own webhook, which applies every option.',
      });
  });
  const settings = await ctx.settings();
  const backend = await ctx.openBackend({ source: 'alert' });
  const host = createClientHost({
    backend,
    ledger: () => (backend as GuardedBackend).ledger(),
    profile: settings.profile,
    now,
    sleep: deps.sleep,
    note: (line) => ctx.io.err(ctx.io.errColor.dim(`trade alert: ${line}`)),
  });
  let code = 0;
  let failed = 0;
  let stopped: number | undefined;
  await using(backend, async () => {
    try {
      for (const [i, alert] of alerts.entries()) {
        if (alert.kind === 'command' && alert.options.delaySeconds) ctx.io.err(ctx.io.errColor.dim(`trade alert: waiting ${alert.options.delaySeconds} s (delay)`));
        const outcome = await runAlert(alert, host, { alertId: alertIdOf(now()) });
        print(ctx, alert, outcome, i, alerts.length, options, backend.label);
        const outcomeCode = exitCodeOf(outcome);
        if (outcomeCode !== 0) {
          failed++;
          if (code === 0) code = outcomeCode;
        }
        // An order whose fate is unknown: nothing more is sent, so nothing is doubled (DESIGN "Retries").
        if (outcome.results.some((r) => r.cause instanceof NetworkError && r.cause.outcomeUnknown)) {
          stopped = i + 1;
          break;
        }
      }
    } finally {
      host.close();
    }
  });
  if (code === 0) return;
  const notSent = stopped === undefined ? '' : `; the outcome of alert ${stopped} is unknown, so the ${alerts.length - stopped} after it were not sent (trade reconcile tells what became of it)`;
  throw new IncompleteError(`${failed} of ${alerts.length} alert${alerts.length === 1 ? '' : 's'} not carried out in full${notSent}`, code);
}

/** A 32-hex id for the alert (the OCO id of its bracket is `br-<id>`). */
function alertIdOf(now: Date): string {
  const random = crypto.getRandomValues(new Uint8Array(12));
  return `${now.getTime().toString(16).padStart(8, '0').slice(-8)}${Buffer.from(random).toString('hex')}`.slice(0, 32);
}

/**
 * The exit code of an outcome (DESIGN "Exit codes"): an error of the backend or the guard keeps
 * its own; a value only the running could judge is a usage error (nothing was sent); the kill
 * switch, the rate limit and the window are the client's own refusals, as the guard's are;
 * anything else the service (or the engine) refused.
 */
function exitCodeOf(outcome: AlertOutcome): number {
  for (const result of [...outcome.results, outcome]) {
    if (!('error' in result) || result.error === undefined) continue;
    const cause = (result as CloneResult).cause;
    if (cause instanceof TradeError) return cause.exitCode;
    if (result.error === 'invalid_value' || result.error === 'missing_field') return ExitCode.usage;
    if (result.error === 'kill_switch_on' || result.error === 'rate_limited' || result.error === 'outside_trade_window') return ExitCode.guard;
    return ExitCode.rejected;
  }
  return 0;
}

const short = (id: string) => (/^[0-9a-f]{32}$/.test(id) ? id.slice(0, 8) : id);

/** One call in words: `PlaceOrder SELL 1 ES 06-26 LIMIT limit 6002.5 GTC OCO br-… → order 1a2b3c4d`. */
function describeCall(call: CallRecord): string {
  const a = call.args;
  const body = (envelopeData(call.body) ?? call.body ?? {}) as Record<string, unknown>;
  const what =
    'orderType' in a && 'action' in a
      ? describeOrder(a as unknown as OrderBody)
      : Object.entries(a)
          .filter(([k]) => k !== 'account')
          .map(([k, v]) => `${k} ${String(v)}`)
          .join(', ');
  const ids = typeof body.orderId === 'string' ? [body.orderId] : Array.isArray(body.orderIds) ? (body.orderIds as string[]) : [];
  const closed = Array.isArray(body.closedPositions) ? (body.closedPositions as Array<{ marketPosition?: string; quantity?: number; instrument?: string; account?: string }>) : [];
  const result = [
    ids.length ? `order${ids.length === 1 ? '' : 's'} ${ids.map(short).join(', ')}` : '',
    closed.length ? `closed ${closed.map((p) => `${p.marketPosition?.toLowerCase()} ${p.quantity} ${p.instrument}${p.account ? ` in ${p.account}` : ''}`).join(', ')}` : '',
  ].filter(Boolean);
  return `${call.operation}${what ? ` ${what}` : ''}${result.length ? ` → ${result.join('; ')}` : ''}`;
}

function print(ctx: CommandContext, alert: Alert, outcome: AlertOutcome, index: number, count: number, options: AlertOptions, backendLabel: string): void {
  const { io } = ctx;
  if (options.json) {
    io.out(JSON.stringify({ ...(count > 1 ? { alert: index + 1 } : {}), ...outcomeBody(outcome, alert.ignoredFields) }));
    return;
  }
  const c = io.color;
  const colour = outcome.status === 'failed' ? c.red : outcome.status === 'warning' ? c.yellow : c.green;
  if (alert.kind === 'kill_switch') {
    io.out(colour(`${count > 1 ? `alert ${index + 1}: ` : ''}kill switch ${alert.on ? 'ON: no alert is carried out, and the guard refuses new orders (profile halted), until kill_switch=off or trade resume' : 'OFF'}`));
    return;
  }
  io.out(colour(`${count > 1 ? `alert ${index + 1}: ` : ''}${outcome.command} ${outcome.status}${outcome.error ? `: ${outcome.error}: ${outcome.detail}` : ''}`));
  for (const result of outcome.results) {
    const who = result.account ?? 'every account';
    for (const call of result.calls) io.out(`  ${who}: ${describeCall(call)}`);
    if (result.status !== 'success' && !outcome.error) io.out(`  ${who}: ${result.status}${result.error ? ` ${result.error}` : ''}: ${result.detail}`);
  }
  for (const warning of outcome.warnings) io.out(c.yellow(`  warning: ${warning}`));
  if (alert.ignoredFields.length) io.out(`  ignored fields: ${alert.ignoredFields.join(', ')}`);
  io.out(c.dim(`  backend ${backendLabel}`));
}

/** `--check`: what each message would send, or its error; nothing is opened or sent. */
function printCheck(ctx: CommandContext, alerts: Alert[], options: AlertOptions): void {
  const { io } = ctx;
  alerts.forEach((alert, i) => {
    const refused = unsupported(alert, cliLimits);
    if (alert.kind === 'kill_switch') {
      const line = { ...(alerts.length > 1 ? { alert: i + 1 } : {}), killSwitch: alert.on ? 'on' : 'off', warnings: alert.warnings, ignoredFields: alert.ignoredFields };
      if (options.json) io.out(JSON.stringify(line));
      else io.out(`${alerts.length > 1 ? `alert ${i + 1}: ` : ''}kill switch ${alert.on ? 'on' : 'off'}`);
      return;
    }
    const calls = checkedCalls(alert);
    const notes = optionNotes(alert);
    if (options.json) {
      io.out(
        JSON.stringify({
          ...(alerts.length > 1 ? { alert: i + 1 } : {}),
          command: alert.command,
          calls,
          options: notes,
          warnings: alert.warnings,
          ignoredFields: alert.ignoredFields,
          ...(refused ? { notByTradeAlert: `${refused}; use --webhook` } : {}),
        }),
      );
      return;
    }
    io.out(`${alerts.length > 1 ? `alert ${i + 1}: ` : ''}${alert.command}`);
    for (const call of calls) io.out(`  ${call.account ?? 'every account'}: ${call.operation} ${JSON.stringify(call.args)}`);
    for (const note of notes) io.out(`  option: ${note}`);
    for (const warning of alert.warnings) io.out(`  warning: ${warning}`);
    if (alert.ignoredFields.length) io.out(`  ignored fields: ${alert.ignoredFields.join(', ')}`);
    if (refused) io.out(`  trade alert cannot apply it (${refused}); trade alert --webhook can`);
  });
  io.err(io.errColor.dim('Checked only: nothing was sent.'));
}
