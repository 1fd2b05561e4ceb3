/**
 * `trade sandbox ...`: a running `trade serve` as a test bench (issue 22), over its control routes
 * under `/_sandbox/`: inject scenario rules, list and clear them, read the request log, save,
 * restore and reset the store; and the session clock a replay drives (issue 29). The server is
 * reached the way the http backend reaches a service: the profile's base URL (TRADE_BASE_URL) and
 * token (TRADE_TOKEN); the clock, on the embedded backend, in this machine's store.
 */
import { ConfigError, NetworkError, RejectedError, UsageError } from '../../common/errors.js';
import { checkTransport } from '../../backends/remote.js';
import { serviceRoot } from '../../config/keys.js';
import { type CommandContext, using } from '../context.js';
import type { LogEntry } from '../../server/sandbox/request-log.js';

interface Target {
  root: string;
  token: string;
  timeoutMs: number;
}

async function target(ctx: CommandContext): Promise<Target> {
  const settings = await ctx.settings();
  const profile = settings.profile === 'default' ? '' : ` --profile ${settings.profile}`;
  if (!settings.baseUrl)
    throw new ConfigError('No base URL is set: trade sandbox talks to a running trade serve at the base URL.', {
      code: 'no_base_url',
      hint: `Set it with \`trade config set${profile} base-url http://127.0.0.1:8080\` (or TRADE_BASE_URL).`,
    });
  if (!settings.token)
    throw new ConfigError("No token is set: trade sandbox needs the token of the trade serve it talks to.", {
      code: 'no_token',
      hint: `Set it with \`trade login${profile}\` (or TRADE_TOKEN).`,
    });
  checkTransport(settings.baseUrl, settings.insecure);
  return { root: serviceRoot(settings.baseUrl), token: settings.token, timeoutMs: settings.timeoutMs };
}

/** One control request; an answer that is not 2xx is a typed error with the server's message. */
async function call(ctx: CommandContext, method: string, path: string, body?: unknown, waitMs = 0): Promise<Record<string, unknown>> {
  const { root, token, timeoutMs: configured } = await target(ctx);
  const timeoutMs = Math.max(configured, waitMs);
  let response: Response;
  try {
    response = await fetch(`${root}/_sandbox/${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
    throw new NetworkError(`Cannot reach trade serve at ${root} (${cause})`, { hint: 'Is trade serve running there? Nothing was changed.' });
  }
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (response.status === 401) throw new ConfigError('trade serve refused the token (401)', { code: 'bad_token', hint: 'Use the token trade serve was started with.' });
  const answer = (parsed ?? {}) as Record<string, unknown>;
  if (response.status === 404 && answer.error === 'not_found')
    throw new NetworkError(`${root} has no /_sandbox/ routes: is it a trade serve of this version?`, { code: 'not_a_sandbox' });
  if (!response.ok) {
    const message = typeof answer.error === 'string' ? answer.error : `trade serve answered ${response.status}`;
    throw new RejectedError(message, { status: response.status, body: answer });
  }
  return answer;
}

export interface InjectOptions {
  name?: string;
  operation?: string;
  account?: string;
  instrument?: string;
  transport?: string;
  nth?: string;
  every?: string;
  probability?: string;
  seed?: string;
  times?: string;
  json?: boolean;
}

function number(flag: string, text: string | undefined, whole: boolean): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || (whole && !Number.isInteger(value)))
    throw new UsageError(`--${flag} must be ${whole ? 'a whole number' : 'a number'}, got '${text}'`);
  return value;
}

export async function runSandboxInject(ctx: CommandContext, effect: string[], options: InjectOptions): Promise<void> {
  const rule = {
    name: options.name,
    operation: options.operation,
    account: options.account,
    instrument: options.instrument,
    transport: options.transport,
    nth: number('nth', options.nth, true),
    every: number('every', options.every, true),
    probability: number('probability', options.probability, false),
    seed: number('seed', options.seed, true),
    times: number('times', options.times, true),
    effect: effect.join(' '),
  };
  // The server checks it with the scenario file's schema; checked here first, so a bad flag is exit 2 with nothing sent.
  const { RuleInput } = await import('../../server/sandbox/rules.js');
  const checked = RuleInput.safeParse(Object.fromEntries(Object.entries(rule).filter(([, v]) => v !== undefined)));
  if (!checked.success) {
    const flag = (field: PropertyKey | undefined) => (field === 'effect' || field === undefined ? 'EFFECT' : `--${String(field)}`);
    throw new UsageError(checked.error.issues.map((i) => `${flag(i.path[0])}: ${i.message}`).join('; '), { hint: 'Nothing was sent.' });
  }
  const answer = await call(ctx, 'POST', 'rules', checked.data);
  if (options.json) return ctx.io.out(JSON.stringify(answer));
  ctx.io.out(`injected ${describeRule(answer.rule as RuleLine)}`);
}

interface RuleLine {
  id: number;
  name: string;
  operation?: string;
  account?: string;
  instrument?: string;
  transport?: string;
  nth?: number;
  every?: number;
  probability?: number;
  seed?: number;
  times?: number;
  effect: string;
  seen: number;
  fired: number;
}

function describeRule(rule: RuleLine): string {
  const match = [rule.operation ?? 'any operation', rule.account, rule.instrument, rule.transport].filter(Boolean).join(' ');
  const when =
    rule.nth !== undefined
      ? `call ${rule.nth}`
      : rule.every !== undefined
        ? `every ${rule.every}`
        : rule.probability !== undefined
          ? `p=${rule.probability} seed ${rule.seed ?? 1}`
          : 'always';
  const times = rule.times === undefined ? '' : `, at most ${rule.times}×`;
  return `#${rule.id} ${rule.name}: ${match}, ${when}${times} → ${rule.effect} (seen ${rule.seen}, fired ${rule.fired})`;
}

export async function runSandboxRules(ctx: CommandContext, options: { json?: boolean }): Promise<void> {
  const answer = await call(ctx, 'GET', 'rules');
  if (options.json) return ctx.io.out(JSON.stringify(answer));
  const rules = answer.rules as RuleLine[];
  if (rules.length === 0) return ctx.io.out('no rules: every request is answered normally');
  for (const rule of rules) ctx.io.out(describeRule(rule));
}

export async function runSandboxClear(ctx: CommandContext, options: { json?: boolean }): Promise<void> {
  const answer = await call(ctx, 'DELETE', 'rules');
  if (options.json) return ctx.io.out(JSON.stringify(answer));
  ctx.io.out(`cleared ${String(answer.cleared)} rule${answer.cleared === 1 ? '' : 's'}`);
}

/** A log entry as the control route sends it: its time as ISO text. */
type LogLine = Omit<LogEntry, 'time'> & { time: string };

export async function runSandboxLog(ctx: CommandContext, options: { json?: boolean; operation?: string }): Promise<void> {
  const answer = await call(ctx, 'GET', `log${options.operation === undefined ? '' : `?operation=${encodeURIComponent(options.operation)}`}`);
  if (options.json) return ctx.io.out(JSON.stringify(answer));
  const entries = answer.entries as LogLine[];
  for (const e of entries) {
    const status = e.status === 0 ? 'dropped' : String(e.status);
    const rule = e.rule === undefined ? '' : `  rule ${e.rule}`;
    ctx.io.out(`${e.time}  ${e.transport.padEnd(4)} ${e.operation.padEnd(18)} ${(e.account ?? '-').padEnd(10)} ${status.padStart(7)} ${e.ms.toFixed(1).padStart(8)}ms${rule}  ${JSON.stringify(e.body ?? null)}`);
  }
  const counts = Object.entries(answer.counts as Record<string, number>);
  ctx.io.out(`${entries.length} request${entries.length === 1 ? '' : 's'} shown (${String(answer.total)} since start, the last ${String(answer.size)} kept)`);
  for (const [operation, n] of counts) ctx.io.out(`  ${operation.padEnd(24)} ${n}`);
}

interface AlertRow {
  receivedAt: string;
  status: string;
  command?: string;
  account?: string;
  instrument?: string;
  orderIds: string[];
  error?: string;
  detail?: string;
  warning?: string;
}

/** The webhook's Alert History (issue 32), oldest first. */
export async function runSandboxAlerts(ctx: CommandContext, options: { json?: boolean; status?: string; limit?: string }): Promise<void> {
  const query = new URLSearchParams();
  if (options.status !== undefined) query.set('status', options.status);
  if (options.limit !== undefined) query.set('limit', options.limit);
  const answer = await call(ctx, 'GET', `alerts${query.size ? `?${query.toString()}` : ''}`);
  if (options.json) return ctx.io.out(JSON.stringify(answer));
  const rows = answer.alerts as AlertRow[];
  for (const r of rows) {
    const what = r.error ? `${r.error}: ${r.detail ?? ''}` : r.warning ?? (r.orderIds.length ? `orders ${r.orderIds.join(', ')}` : '');
    ctx.io.out(`${r.receivedAt}  ${r.status.padEnd(7)} ${(r.command ?? '-').padEnd(17)} ${(r.account ?? '-').padEnd(10)} ${(r.instrument ?? '-').padEnd(10)} ${what}`.trimEnd());
  }
  ctx.io.out(`${rows.length} alert${rows.length === 1 ? '' : 's'} shown`);
}

export async function runSandboxSnapshot(ctx: CommandContext, action: 'save' | 'restore' | 'reset', name: string | undefined, options: { json?: boolean }): Promise<void> {
  const answer = await call(ctx, 'POST', action, action === 'reset' ? {} : { name });
  if (options.json) return ctx.io.out(JSON.stringify(answer));
  if (action === 'save') ctx.io.out(`saved the store as '${name}' (${String(answer.file)})`);
  else if (action === 'restore') ctx.io.out(`restored the store from '${name}'`);
  else ctx.io.out('reset the store to the empty default');
}

export interface ClockOptions {
  json?: boolean;
}

/** The clock as `/_sandbox/clock` answers it. */
interface ClockLine {
  time: string;
  replay: boolean;
  paused?: boolean;
  speed?: number | 'max';
  stepping?: boolean;
  records?: number;
  total?: number;
  source?: string | null;
}

export function describeClock(clock: ClockLine): string {
  if (!clock.replay) return `${clock.time}  the wall clock (no replay is running)`;
  const pace = clock.speed === 'max' ? 'at full speed' : `at ${clock.speed}× real time`;
  const state = clock.paused ? `paused (${pace} when resumed)` : pace;
  const done = `${(clock.records ?? 0).toLocaleString('en-US')} of ${(clock.total ?? 0).toLocaleString('en-US')} records`;
  return `${clock.time}  replayed, ${state}; ${done} of ${clock.source ?? 'the replay'}`;
}

/**
 * `trade sandbox clock [show|pause|resume|speed N|step N|step 5m]` (issue 29): the session clock
 * a replay drives. On the embedded backend, the clock of this machine's store (a `trade price
 * replay` or a `trade serve` on it); on http or ws, the clock of the trade serve at the base URL
 * (`/_sandbox/clock`). A step sets that many records (or that much replayed time) and leaves the
 * clock paused; the answer comes once it is done.
 */
export async function runSandboxClock(ctx: CommandContext, action: string | undefined, value: string | undefined, options: ClockOptions): Promise<void> {
  const { parseClockSpeed, parseStep } = await import('../../service/session-clock.js');
  const verb = (action ?? 'show').trim().toLowerCase();
  const usage = (message: string) => new UsageError(message, { hint: "Nothing was sent. Run 'trade sandbox clock --help' for examples." });
  let path = 'clock';
  let body: Record<string, unknown> | undefined;
  if (verb === 'show') {
    if (value !== undefined) throw usage(`show takes no value, got '${value}'`);
  } else if (verb === 'pause' || verb === 'resume') {
    if (value !== undefined) throw usage(`${verb} takes no value, got '${value}'`);
    path = `clock/${verb}`;
    body = {};
  } else if (verb === 'speed') {
    if (value === undefined) throw usage('speed needs a value: a number of times real time (10), or max');
    const speed = parseClockSpeed(value);
    if (typeof speed !== 'number') throw usage(`speed must be ${speed.error}`);
    path = 'clock/speed';
    body = { speed: speed === 0 ? 'max' : speed };
  } else if (verb === 'step') {
    if (value === undefined) throw usage('step needs a value: a number of records (10) or a replayed time (30s, 5m, 1h)');
    const step = parseStep(value);
    if ('error' in step) throw usage(`step must be ${step.error}`);
    path = 'clock/step';
    body = 'records' in step ? { records: step.records } : { time: value.trim().toLowerCase() };
  } else {
    throw usage(`ACTION must be show, pause, resume, speed or step, got '${action}'`);
  }
  const { STEP_WAIT_MS } = await import('../../engine/replay-driver.js');
  let answer: Record<string, unknown>;
  if ((await ctx.settings()).backend === 'embedded') answer = await localClock(ctx, path, body);
  else answer = body === undefined ? await call(ctx, 'GET', path) : await call(ctx, 'POST', path, body, STEP_WAIT_MS + 5_000);
  if (options.json) return ctx.io.out(JSON.stringify(answer));
  ctx.io.out(describeClock(answer.clock as ClockLine));
}

/** The same request on this machine's store, answered as `/_sandbox/clock` answers it. */
async function localClock(ctx: CommandContext, path: string, body: Record<string, unknown> | undefined): Promise<Record<string, unknown>> {
  const [{ clockView }, { controlClock, STEP_WAIT_MS }, { controlOf }] = await Promise.all([
    import('../../service/session-clock.js'),
    import('../../engine/replay-driver.js'),
    import('../../server/sandbox/clock-routes.js'),
  ]);
  return using(await ctx.openEngine(), async (engine) => {
    if (body !== undefined) {
      const control = controlOf(path.slice('clock/'.length), body);
      if (typeof control === 'string') throw new UsageError(control);
      const { done } = await controlClock(engine, control);
      if (!done) throw new RejectedError(`The step was not done within ${STEP_WAIT_MS / 1000} s; the replay carries it on`, { code: 'step_pending' });
    }
    return { clock: clockView(engine.clockState(), Date.now()), success: true };
  });
}
