/**
 * The examples of service-reference.md §12, read from the reference itself: each request and the
 * answer it shows, in order, and how an answer is compared with the one shown (field by field
 * except ids, times and money figures, §12's last line; every Order and Position against the
 * field tables of §4.1 and §4.2). Replayed against `trade serve` (test/server/reference-replay.test.ts)
 * and against the reference double (test/contract/double-replay.test.ts), so the double and our
 * server cannot share a misreading the reference's own examples would show.
 */
import { readFileSync } from 'node:fs';
import { expect } from 'vitest';

export const REFERENCE = readFileSync(new URL('../../docs/service-reference.md', import.meta.url), 'utf8');
export const SECTION = REFERENCE.slice(REFERENCE.indexOf('## 12. Examples for replay'), REFERENCE.indexOf('## 13. Sources'));
/** The preconditions of §12 ask for the token `s3cret`; the suite's own token stands in for it. */
export const TOKEN_IN_EXAMPLES = 's3cret';

export interface HttpStep {
  kind: 'http';
  method: string;
  path: string;
  auth: boolean;
  body?: string;
  expect: Expectation;
}
export interface WsStep {
  kind: 'ws';
  send: Record<string, unknown>;
  expect: unknown;
}
export type Step = (HttpStep | WsStep) & { example: number; index: number; text: string };
export type Expectation = { status: number; body?: unknown; partial?: true };

/** The examples' requests and answers, in order, as the reference writes them. */
export function examples(): Step[] {
  const steps: Step[] = [];
  const parts = SECTION.split(/^\*\*(\d+)\. .*$/m);
  let last: HttpStep | undefined;
  for (let i = 1; i < parts.length; i += 2) {
    const example = Number(parts[i]);
    if (example === 18) continue; // a server started with a rate limit: its own test below
    const block = /```\n([\s\S]*?)```/.exec(parts[i + 1]!)?.[1] ?? '';
    const lines = block.replace(/\\\n\s*/g, '').split('\n').filter(Boolean);
    let index = 0;
    for (let l = 0; l < lines.length; l++) {
      const line = lines[l]!;
      if (line.startsWith('curl ')) {
        const method = /-X (\w+)/.exec(line)?.[1] ?? 'GET';
        const path = /"\$B([^"]+)"/.exec(line)![1]!;
        const body = /-d '([^']*)'/.exec(line)?.[1];
        const inline = /→ (\d{3})(.*)$/.exec(line);
        const expect = inline ? inlineExpectation(Number(inline[1]), inline[2]!) : expectation(lines[++l]!);
        last = { kind: 'http', method, path, auth: line.includes('-H "$H"'), body, expect };
        steps.push({ ...last, example, index: index++, text: line });
      } else if (/^\d{3} /.test(line) && last) {
        // An answer with no request before it answers the same request sent again (example 2).
        steps.push({ ...last, expect: expectation(line), example, index: index++, text: `again: ${line}` });
      } else if (line.startsWith('→ {')) {
        const send = JSON.parse(line.slice(2)) as Record<string, unknown>;
        const reply = lines[++l]!;
        steps.push({ kind: 'ws', send, expect: JSON.parse(reply.slice(2)), example, index: index++, text: line });
      }
    }
  }
  return steps;
}

/** `→ 200 {...}` after a request (example 15): the status, and the body when it is JSON at all. */
function inlineExpectation(status: number, rest: string): Expectation {
  try {
    return { status, body: JSON.parse(rest.trim()) };
  } catch {
    return { status };
  }
}

function expectation(line: string): Expectation {
  const [, status, rest] = /^(\d{3}) ?(.*?)\s*(\(.*\))?$/.exec(line)!;
  if (!rest) return { status: Number(status) };
  return { status: Number(status), body: JSON.parse(rest) };
}

/** Ids, times and money figures differ run to run (§12); everything else is compared as written. */
const MONEY = new Set(['unrealizedProfitLoss', 'realizedProfitLoss', 'cashValue', 'netLiquidation', 'epoch']);
const TIMES = new Set(['quoteTime', 'quoteTimeUtc', 'time', 'timestamp']);
function normalize(value: unknown, key = ''): unknown {
  if (MONEY.has(key) && typeof value === 'number') return '<money>';
  if (TIMES.has(key) && typeof value === 'string') return '<time>';
  if (typeof value === 'string') {
    if (/^[0-9a-f]{32}$/.test(value)) return '<id>';
    if (/^\d{4}-\d\d-\d\dT[\d:.]+$/.test(value)) return '<time>';
    return value;
  }
  if (Array.isArray(value)) return value.map((v) => normalize(v));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalize(v, k)]));
  return value;
}

/**
 * An answer against what the reference shows: equal, except where `"...": "..."` (or a `"..."`
 * item) marks fields or items left out, where only those shown must be there.
 */
function matches(actual: unknown, expected: unknown): boolean {
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return false;
    const shown = expected.filter((e) => e !== '...');
    if (shown.length !== expected.length) return shown.every((e) => actual.some((a) => matches(a, e)));
    return actual.length === expected.length && expected.every((e, i) => matches(actual[i], e));
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return false;
    const want = Object.entries(expected).filter(([k]) => k !== '...');
    if (!('...' in expected) && Object.keys(actual).length !== want.length) return false;
    return want.every(([k, v]) => k in actual && matches((actual as Record<string, unknown>)[k], v));
  }
  return actual === expected;
}

export function compare(actual: unknown, expected: unknown): void {
  const [got, want] = [normalize(actual), normalizeShown(expected)];
  if (!matches(got, want)) expect(got).toEqual(want);
}

/** The expected value normalized as the answer is, its "..." markers kept. */
function normalizeShown(value: unknown, key = ''): unknown {
  if (Array.isArray(value)) return value.map((v) => (v === '...' ? v : normalizeShown(v)));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, k === '...' ? v : normalizeShown(v, k)]));
  return normalize(value, key);
}

/** The field names of a §4 table: `| \`field\` | type | ...`. */
function fieldsOf(heading: string): string[] {
  const table = REFERENCE.slice(REFERENCE.indexOf(heading), REFERENCE.indexOf('\n###', REFERENCE.indexOf(heading) + 1));
  return [...table.matchAll(/^\| `(\w+)`(?:, `(\w+)`)? \|/gm)].flatMap((m) => [m[1]!, ...(m[2] ? [m[2]] : [])]);
}
const ORDER_FIELDS = fieldsOf('### 4.1 Order');
const POSITION_FIELDS = fieldsOf('### 4.2 Position');

/** Every Order and Position in a reply carries exactly the fields of §4.1 / §4.2 (and `success` at top level). */
export function checkShapes(body: unknown, top = true): void {
  if (Array.isArray(body)) return body.forEach((b) => checkShapes(b, false));
  if (body === null || typeof body !== 'object') return;
  const keys = Object.keys(body).filter((k) => !(top && k === 'success')).sort();
  if ('orderState' in body) expect(keys).toEqual([...ORDER_FIELDS].sort());
  else if ((body as { type?: unknown }).type === 'NinjaTrader.Cbi.Position') expect(keys).toEqual([...POSITION_FIELDS].sort());
  for (const value of Object.values(body)) checkShapes(value, false);
}
