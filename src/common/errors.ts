/**
 * Typed errors. Commands and backends throw these; only src/cli/main.ts turns them into exit codes.
 * Messages never contain the token: callers build them from fixed text and user-visible fields only.
 */

export const ExitCode = {
  ok: 0,
  rejected: 1,
  usage: 2,
  config: 3,
  network: 4,
  rateLimited: 5,
  guard: 6,
  cancelled: 130,
} as const;

/** What each exit code means, for the manual and the man page (src/cli/manual.ts). */
export const EXIT_CODE_MEANINGS: ReadonlyArray<readonly [code: number, meaning: string]> = [
  [ExitCode.ok, 'done'],
  [ExitCode.rejected, 'the service or engine rejected the request (its message is shown)'],
  [ExitCode.usage, 'usage: a flag missing or invalid; nothing was sent'],
  [ExitCode.config, 'configuration or authentication: no token, bad token, no base URL'],
  [ExitCode.network, 'network or timeout: the outcome may be unknown; the message says how to check'],
  [ExitCode.rateLimited, 'rate limited: nothing was placed; the message says when to retry'],
  [ExitCode.guard, "refused by a guard rule (or the guard's ledger cannot be used): nothing was sent"],
  [ExitCode.cancelled, 'cancelled at a prompt (declined, Ctrl-C, Ctrl-D); nothing was sent'],
];

export interface TradeErrorOptions {
  hint?: string;
  cause?: unknown;
}

export abstract class TradeError extends Error {
  abstract readonly exitCode: number;
  /** Stable machine-readable code, e.g. "usage" or "outcome_unknown". */
  abstract readonly code: string;
  readonly hint?: string;

  constructor(message: string, options: TradeErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.hint = options.hint;
  }
}

/** A flag is missing or invalid. Nothing was sent. Exit 2. */
export class UsageError extends TradeError {
  readonly exitCode = ExitCode.usage;
  readonly code: string = 'usage';
}

export interface FieldIssue {
  field: string;
  message: string;
}

/**
 * The order (or another request) broke a schema rule. The message has the service's form:
 * `Invalid request: <field>: <why>`. On the CLI this is a usage error (exit 2, nothing sent);
 * the server turns it into HTTP 400.
 */
export class ValidationError extends UsageError {
  override readonly code = 'invalid_request';
  readonly issues: FieldIssue[];

  constructor(issues: FieldIssue[], options: TradeErrorOptions = {}) {
    super(formatIssues(issues), options);
    this.issues = issues;
  }
}

/** A message names this many issues at most, so a body with thousands of bad keys gets a readable answer. */
export const MAX_LISTED_ISSUES = 10;

/**
 * Runs each parser, collecting every field issue, so that one ValidationError names every bad
 * field (a path parameter and a body, or a command's arguments and flags) instead of the first.
 */
export function parseAll<T extends unknown[]>(parsers: { [K in keyof T]: () => T[K] }, options: TradeErrorOptions = {}): T {
  const issues: FieldIssue[] = [];
  const values = parsers.map((parse) => {
    try {
      return parse();
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      issues.push(...error.issues);
      return undefined;
    }
  });
  if (issues.length > 0) throw new ValidationError(issues, options);
  return values as T;
}

export function formatIssues(issues: FieldIssue[]): string {
  const listed = issues.slice(0, MAX_LISTED_ISSUES).map((i) => (i.field ? `${i.field}: ${i.message}` : i.message));
  if (issues.length > MAX_LISTED_ISSUES) listed.push(`and ${issues.length - MAX_LISTED_ISSUES} more`);
  return `Invalid request: ${listed.join('; ')}`;
}

/** The service or the engine refused the request; its message is shown as it is. Exit 1. */
export class RejectedError extends TradeError {
  readonly exitCode = ExitCode.rejected;
  readonly code: string;
  /** The HTTP status the service answered (or would answer) with. */
  readonly status: number;
  /** The service's error body, whole (`--json` prints it); `{error: message}` when there is no other. */
  readonly body: Record<string, unknown>;

  constructor(message: string, options: TradeErrorOptions & { status?: number; code?: string; body?: Record<string, unknown> } = {}) {
    super(message, options);
    this.status = options.status ?? 400;
    this.code = options.code ?? 'rejected';
    this.body = options.body ?? { error: message };
  }
}

/** An account the service does not know: 404 with the AI docs' body (§1.4, §6.1). */
export function invalidAccount(name: string): RejectedError {
  const detail = `Account ${name} not found`;
  return new RejectedError(detail, {
    status: 404,
    code: 'invalid_account',
    body: { success: false, error: 'invalid_account', detail },
  });
}

/** No token, a bad token, no base URL, a bad config value. Exit 3. */
export class ConfigError extends TradeError {
  readonly exitCode = ExitCode.config;
  readonly code: string;
  constructor(message: string, options: TradeErrorOptions & { code?: string } = {}) {
    super(message, options);
    this.code = options.code ?? 'config';
  }
}

/**
 * Refused by a guard rule (src/guard/), or the guard could not judge (its ledger cannot be used:
 * it fails closed). Nothing was sent. Exit 6. `body` is what `--json` prints.
 */
export class GuardError extends TradeError {
  readonly exitCode = ExitCode.guard;
  readonly code: string;
  readonly body: { success: false; error: string; detail: string; rule?: string; limit?: unknown; value?: unknown };
  constructor(message: string, options: TradeErrorOptions & { code: string; rule?: string; limit?: unknown; value?: unknown }) {
    super(message, options);
    this.code = options.code;
    this.body = { success: false, error: options.code, detail: message };
    if (options.rule !== undefined) Object.assign(this.body, { rule: options.rule, limit: options.limit, value: options.value });
  }
}

/** Why the embedded engine's store cannot be used; the `error` of `trade serve`'s 5xx body. */
export type StoreProblem =
  | 'store_not_a_database'
  | 'store_corrupt'
  | 'store_read_only'
  | 'store_full'
  | 'store_newer'
  | 'store_data_dir'
  | 'store_unavailable'
  | 'store_driver';

/**
 * The embedded engine's store cannot be used: not a database, damaged, read-only, on a full disk,
 * from a newer trade, or its directory cannot be made. Exit 1, as `trade doctor` has it: "the
 * store cannot be used". The message names the file and the hint what to do. `trade serve`
 * answers `body` (no path: what is wrong on the server is for its operator, told on its stderr).
 */
export class StoreError extends TradeError {
  readonly exitCode = ExitCode.rejected;
  readonly code: StoreProblem;
  /** 503 when the operator can fix it while the data stays (space, permissions), else 500. */
  readonly status: number;
  readonly body: { success: false; error: StoreProblem; detail: string };

  constructor(code: StoreProblem, message: string, options: TradeErrorOptions & { status: number; detail: string }) {
    super(message, options);
    this.code = code;
    this.status = options.status;
    this.body = { success: false, error: code, detail: options.detail };
  }
}

/**
 * The network failed or timed out. When `outcomeUnknown` is true the request may have reached the
 * service, so it must not be sent again automatically. Exit 4.
 */
export class NetworkError extends TradeError {
  readonly exitCode = ExitCode.network;
  readonly code: string;
  readonly outcomeUnknown: boolean;
  constructor(message: string, options: TradeErrorOptions & { outcomeUnknown?: boolean; code?: string } = {}) {
    super(message, options);
    this.outcomeUnknown = options.outcomeUnknown ?? false;
    this.code = options.code ?? (this.outcomeUnknown ? 'outcome_unknown' : 'network');
  }
}

/** The service said 429. Nothing was placed. Exit 5. */
export class RateLimitedError extends TradeError {
  readonly exitCode = ExitCode.rateLimited;
  readonly code = 'rate_limited';
  /** Seconds to wait, from Retry-After, when the service said. */
  readonly retryAfterSeconds?: number;
  constructor(message: string, options: TradeErrorOptions & { retryAfterSeconds?: number } = {}) {
    super(message, options);
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/** The person declined or pressed Ctrl-C at a prompt. Nothing was sent. Exit 130. */
export class CancelledError extends TradeError {
  readonly exitCode = ExitCode.cancelled;
  readonly code = 'cancelled';
  constructor(message = 'Cancelled — nothing was sent.') {
    super(message);
  }
}

/**
 * A command that wrote its own results (a batch) and ends with a non-zero code; the message is a
 * one-line summary for stderr.
 */
export class IncompleteError extends TradeError {
  readonly code = 'incomplete';
  readonly exitCode: number;
  constructor(message: string, exitCode: number) {
    super(message);
    this.exitCode = exitCode;
  }
}

/** What a file-system error code means, in words, with the code for searching. */
export function describeErrno(code: string): string {
  const words: Record<string, string> = {
    EACCES: 'permission denied',
    EPERM: 'operation not permitted',
    ENOTDIR: 'a file is where a folder should be',
    EISDIR: 'it is a folder, not a file',
    EEXIST: 'a file is where a folder should be',
    EROFS: 'the file system is read-only',
    ENOSPC: 'the disk is full',
    EDQUOT: 'the disk quota is used up',
  };
  return words[code] ? `${words[code]} (${code})` : code;
}
