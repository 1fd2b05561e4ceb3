/**
 * `trade serve` as a test bench (issue 22): the scenario rules in force, the request log, and
 * snapshots of the store, with the control routes under `/_sandbox/` (same token as the service,
 * outside its paths, never rate limited) that `trade sandbox` talks to.
 */
import { mkdirSync, renameSync, rmSync, existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { tmpdir } from 'node:os';
import type { FastifyInstance } from 'fastify';
import type { Engine } from '../../engine/engine.js';
import { openStore } from '../../engine/store.js';
import { RATE_LIMITED } from '../limits.js';
import { countsOf, createRequestLog, type LogEntry, type RequestLog } from './request-log.js';
import { createRuleSet, type Effect, MAX_RULES, type Rule, RuleInput, type RuleSet } from './rules.js';
import { registerClockRoutes } from './clock-routes.js';

export const SANDBOX_PREFIX = '/_sandbox/';

export interface SandboxOptions {
  engine: Engine;
  /** Rules in force at start (a scenario file). */
  rules?: RuleInput[];
  logSize?: number;
  /** Removes the token from text before it leaves the server. */
  scrub: (text: string) => string;
}

export interface Sandbox {
  rules: RuleSet;
  log: RequestLog;
  /** The body a `status` effect answers (service-reference.md §6.1), and its headers. */
  statusReply(effect: Extract<Effect, { kind: 'status' }>): { status: number; body: unknown; headers: Record<string, string> };
  /** The engine an operation runs on when a rule fired: placements held or part-filled. */
  engineFor(rule: Rule | undefined): Engine;
  /** After a reject-late placement answered: the order turns Rejected when the delay has passed. */
  afterPlaced(rule: Rule | undefined, body: unknown, account: unknown): void;
  register(app: FastifyInstance): void;
  /** Stops the late rejects still waiting (shutdown). */
  close(): void;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** Snapshots kept at once: each is a whole copy of the store on disk. */
export const MAX_SNAPSHOTS = 100;

export class SnapshotError extends Error {
  constructor(
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

export function createSandbox(options: SandboxOptions): Sandbox {
  const { engine, scrub } = options;
  const rules = createRuleSet();
  for (const rule of options.rules ?? []) rules.add(rule);
  const log = createRequestLog(options.logSize);
  const timers = new Set<NodeJS.Timeout>();
  const snapshotDir = `${engine.file}.snapshots`;

  const snapshotFile = (name: unknown): string => {
    if (typeof name !== 'string' || !NAME.test(name))
      throw new SnapshotError(`Invalid request: name: must be 1-64 of A-Z a-z 0-9 . _ - and start with a letter or digit, got ${JSON.stringify(name)}`);
    if (engine.file === ':memory:') throw new SnapshotError('Invalid request: an in-memory store has no place for snapshots');
    return join(snapshotDir, `${name}.db`);
  };

  const saved = () => (existsSync(snapshotDir) ? readdirSync(snapshotDir).filter((f) => f.endsWith('.db')).map((f) => f.slice(0, -3)) : []);

  function save(name: unknown): string {
    const file = snapshotFile(name);
    if (!existsSync(file) && saved().length >= MAX_SNAPSHOTS)
      throw new SnapshotError(`Invalid request: name: ${MAX_SNAPSHOTS} snapshots are saved already, the most kept; save over one of them, or remove some from ${snapshotDir}`);
    mkdirSync(snapshotDir, { recursive: true, mode: 0o700 });
    // Written beside, then renamed: a snapshot of that name is always whole (an older one or this one).
    const partial = `${file}.${process.pid}.tmp`;
    rmSync(partial, { force: true });
    try {
      engine.snapshotTo(partial);
      renameSync(partial, file);
    } catch (error) {
      rmSync(partial, { force: true });
      throw error;
    }
    return file;
  }

  function restore(name: unknown): string {
    const file = snapshotFile(name);
    if (!existsSync(file)) {
      const known = saved();
      throw new SnapshotError(`Invalid request: name: no snapshot '${String(name)}'${known.length ? `; saved: ${known.join(', ')}` : '; none saved yet'}`, 404);
    }
    cancelLateRejects();
    engine.restoreFrom(file);
    return file;
  }

  /** The empty default: what a new store holds (its migrations' accounts), nothing else. */
  function reset(): void {
    const dir = engine.file === ':memory:' ? tmpdir() : dirname(engine.file);
    const file = join(dir, `.trade-sandbox-reset-${process.pid}-${Date.now()}.db`);
    try {
      openStore(file).close();
      cancelLateRejects();
      engine.restoreFrom(file);
    } finally {
      for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
    }
  }

  function cancelLateRejects(): void {
    for (const timer of timers) clearTimeout(timer);
    timers.clear();
  }

  const sandbox: Sandbox = {
    rules,
    log,
    statusReply(effect): { status: number; body: unknown; headers: Record<string, string> } {
      if (effect.status === 429) return { status: 429, body: { error: RATE_LIMITED }, headers: { 'retry-after': String(effect.retryAfter) } };
      if (effect.status === 408)
        return {
          status: 408,
          body: { success: false, error: 'The trading platform is not connected (injected by a trade serve scenario rule)' },
          headers: {},
        };
      return {
        status: 500,
        body: { success: false, error: 'internal_error', detail: 'injected by a trade serve scenario rule' },
        headers: {},
      };
    },
    engineFor(rule) {
      const effect = rule?.effect;
      if (effect?.kind === 'reject-late') return { ...engine, placeOrder: (order) => engine.placeOrder(order, { holdForReject: effect.reason }) };
      if (effect?.kind === 'partial') return { ...engine, placeOrder: (order) => engine.placeOrder(order, { fillCap: effect.quantity }) };
      return engine;
    },
    afterPlaced(rule, body, account) {
      if (rule?.effect.kind !== 'reject-late') return;
      const orderId = (body as { orderId?: unknown } | undefined)?.orderId;
      if (typeof orderId !== 'string' || typeof account !== 'string') return;
      const held = engine.getOrder(orderId, account);
      if (!held || held.rejectReason === undefined) return;
      const timer = setTimeout(() => {
        timers.delete(timer);
        try {
          engine.rejectHeld(held.id);
        } catch {
          // The store went away (shutdown); the order stays held, which reads as Accepted.
        }
      }, rule.effect.ms);
      timer.unref();
      timers.add(timer);
    },
    register(app) {
      app.get(`${SANDBOX_PREFIX}rules`, async () => {
        const list = rules.list();
        return { rules: list, count: list.length, success: true };
      });
      app.post(`${SANDBOX_PREFIX}rules`, async (request, reply) => {
        const parsed = RuleInput.safeParse(request.body ?? {});
        if (!parsed.success) {
          const text = parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ');
          return reply.code(400).send({ error: `Invalid request: ${text}` });
        }
        if (rules.count() >= MAX_RULES)
          return reply.code(400).send({ error: `Invalid request: ${MAX_RULES} rules are in force, the most there may be; DELETE /_sandbox/rules (trade sandbox clear) clears them` });
        const rule = rules.add(parsed.data);
        return { rule: rules.list().find((r) => r.id === rule.id)!, success: true };
      });
      app.delete(`${SANDBOX_PREFIX}rules`, async () => ({ cleared: rules.clear(), success: true }));
      app.get(`${SANDBOX_PREFIX}log`, async (request) => {
        const { operation } = (request.query ?? {}) as { operation?: string };
        const all = log.entries();
        const entries = operation === undefined ? all : all.filter((e) => e.operation === operation);
        // The token never leaves in any form: the whole answer goes through the redactor.
        const text = scrub(JSON.stringify({ entries: entries.map(shown), counts: countsOf(entries), total: log.total(), size: log.size, success: true }));
        return JSON.parse(text) as unknown;
      });
      app.delete(`${SANDBOX_PREFIX}log`, async () => {
        log.clear();
        return { success: true };
      });
      for (const [action, run] of [
        ['save', save],
        ['restore', restore],
      ] as const) {
        app.post(`${SANDBOX_PREFIX}${action}`, async (request, reply) => {
          try {
            const file = run((request.body as { name?: unknown } | undefined)?.name);
            return { name: (request.body as { name: string }).name, file, success: true };
          } catch (error) {
            // Anything else (a full disk, a damaged snapshot) is the server's error handler's: a 500, the cause on stderr.
            if (!(error instanceof SnapshotError)) throw error;
            return reply.code(error.status).send({ error: error.message });
          }
        });
      }
      app.post(`${SANDBOX_PREFIX}reset`, async () => {
        reset();
        return { success: true };
      });
      registerClockRoutes(app, SANDBOX_PREFIX, engine);
    },
    close: cancelLateRejects,
  };
  return sandbox;
}

const shown = (entry: LogEntry) => ({ ...entry, time: new Date(entry.time).toISOString(), ms: Math.round(entry.ms * 10) / 10 });
