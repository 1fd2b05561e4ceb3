/**
 * `trade batch`'s accounting: the one result line each input line gets, whatever happened to
 * it, and the totals behind the exit code and the summary on stderr. Totals are kept as lines
 * are written, so a batch of any length holds no more than the lines not yet written.
 */
import { printable } from '../backends/remote.js';
import { ConfigError, ExitCode, GuardError, NetworkError, RateLimitedError, RejectedError, TradeError, UsageError } from '../common/errors.js';

export interface BatchResult {
  line: number;
  id: unknown;
  /** The HTTP status the line's answer stands for; null when no answer came (see `outcome`). */
  status: number | null;
  /** The service's body, success or failure, exactly as it came. */
  data: unknown;
  /** Present only when the order's fate is not known from the reply. */
  outcome?: 'unknown' | 'not-sent';
}

/** A line that never reached the backend because an earlier one failed in transport. */
export function notSent(line: number, id: unknown): BatchResult {
  return { line, id, status: null, data: { error: 'Not sent: an earlier request failed in transport' }, outcome: 'not-sent' };
}

/** A line refused before it was sent (not JSON, not an RPC, too long, a duplicate key). */
export function refused(line: number, id: unknown, status: number, error: string): BatchResult {
  return { line, id, status, data: { error } };
}

function statusOf(error: TradeError): number | null {
  // ValidationError is a UsageError: the line's request broke the schema.
  if (error instanceof UsageError) return 400;
  if (error instanceof RejectedError) return error.status;
  if (error instanceof RateLimitedError) return 429;
  if (error instanceof ConfigError) return 401;
  // Refused by the guard before it was sent: a refusal by policy.
  if (error instanceof GuardError) return 403;
  // A typed error that carries the status it stands for (a store refusal, say) keeps it.
  const status = (error as { status?: unknown }).status;
  return typeof status === 'number' ? status : null;
}

/** A typed failure of one line: the service's body (or the error's message) and its status. */
const guardRefusals = new WeakSet<BatchResult>();

export function failure(line: number, id: unknown, error: TradeError): BatchResult {
  const data = error instanceof RejectedError || error instanceof GuardError ? error.body : { error: error.message };
  const result: BatchResult = { line, id, status: statusOf(error), data };
  if (error instanceof NetworkError) result.outcome = error.outcomeUnknown ? 'unknown' : 'not-sent';
  if (error instanceof GuardError) guardRefusals.add(result);
  return result;
}

/** The 500 body of §6.1, with what went wrong: the result line is the only place a script reads it. */
export const INTERNAL_ERROR = 'internal_error';

/** The lines built by crashed(): told apart from a service's own body that says internal_error. */
const internalFailures = new WeakSet<BatchResult>();

/**
 * A line whose handling failed with an error nobody typed (a bug, or a store failure the engine
 * did not recognise). `fate` is what is known of it: not sent when it failed before reaching
 * the backend; unknown when a request that moves money may have been executed; nothing for a
 * read, which changes nothing.
 */
export function crashed(line: number, id: unknown, error: unknown, fate: BatchResult['outcome']): BatchResult {
  const message = error instanceof Error ? error.message : String(error);
  const result: BatchResult = { line, id, status: 500, data: { success: false, error: INTERNAL_ERROR, detail: `Unexpected error: ${printable(message)}` } };
  if (fate) result.outcome = fate;
  internalFailures.add(result);
  return result;
}

export interface Tally {
  /** Counts a written line. */
  add(result: BatchResult): void;
  readonly lines: number;
  exitCode(stop: Stop): number;
  summary(stop: Stop): string;
}

/** Why a batch ended early, if it did. */
export interface Stop {
  /** The transport or authentication failure after which nothing more was sent. */
  broken?: TradeError;
  /** The input could not be read to its end; the lines read before were all answered. */
  readFailure?: string;
}

export function createTally(): Tally {
  let lines = 0;
  let succeeded = 0;
  let rejected = 0;
  let rateLimited = 0;
  let internal = 0;
  let unknown = 0;
  let notSentCount = 0;
  let guarded = 0;
  let firstInternal: string | undefined;
  return {
    add(result) {
      lines += 1;
      if (result.status === 200) succeeded += 1;
      else if (internalFailures.has(result)) {
        internal += 1;
        firstInternal ??= `line ${result.line}: ${(result.data as { detail: string }).detail}`;
      } else if (result.status !== null) rejected += 1;
      if (result.status === 429) rateLimited += 1;
      if (guardRefusals.has(result)) guarded += 1;
      if (result.outcome === 'unknown') unknown += 1;
      if (result.outcome === 'not-sent') notSentCount += 1;
    },
    get lines() {
      return lines;
    },
    exitCode(stop) {
      if (stop.broken) return stop.broken.exitCode;
      if (unknown > 0) return ExitCode.network;
      if (rateLimited > 0) return ExitCode.rateLimited;
      // Every line that failed was refused by the guard: its own exit code.
      if (guarded > 0 && guarded === lines - succeeded && !stop.readFailure) return ExitCode.guard;
      if (succeeded < lines || stop.readFailure) return ExitCode.rejected;
      return ExitCode.ok;
    },
    summary(stop) {
      const parts = [`${succeeded} succeeded`, `${rejected} rejected${guarded ? ` (${guarded} of them by the guard: trade history lists them)` : ''}`];
      if (internal) parts.push(`${internal} failed unexpectedly`);
      if (unknown) parts.push(`${unknown} outcome unknown (check with \`trade orders\`)`);
      if (notSentCount) parts.push(`${notSentCount} not sent`);
      const said = [`Batch of ${lines} lines: ${parts.join(', ')}.`];
      if (stop.broken) said.push(`Stopped after: ${stop.broken.message}`);
      if (firstInternal) said.push(`First unexpected failure, ${firstInternal}`);
      if (stop.readFailure) said.push(`The input could not be read after line ${lines}: ${stop.readFailure}.`);
      return said.join(' ');
    },
  };
}
