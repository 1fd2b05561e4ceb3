/**
 * A scenario file (`trade serve --scenario FILE`): YAML or JSON (JSON is read by the same YAML
 * parser, which keeps every node's place in the text), checked whole before anything is served.
 * A bad file is a UsageError (exit 2) naming the file, the line and the field.
 *
 * A hostile file gets the same: one larger than MAX_SCENARIO_BYTES is not read, aliases that
 * expand beyond the parser's bound (a "billion laughs") and nesting deeper than a scenario has
 * any use for are refused, and so are more than MAX_RULES rules.
 */
import { readFileSync, statSync } from 'node:fs';
import { isMap, isSeq, LineCounter, parseDocument } from 'yaml';
import * as z from 'zod';
import { UsageError } from '../../common/errors.js';
import { MAX_RULES, RuleInput } from './rules.js';

/** A scenario file is at most this large: a thousand rules fit in a tenth of it. */
export const MAX_SCENARIO_BYTES = 1024 * 1024;
/** Levels of nesting a scenario may have: the file, its rules, a rule's fields, and room to spare. */
const MAX_DEPTH = 16;
/** How many times each alias may be expanded, all told (the yaml library's guard against alias bombs). */
const MAX_ALIASES = 100;

const ScenarioFile = z
  .object({
    /** The default seed of the rules with a probability and no seed of their own. */
    seed: z.number().int().min(0).max(2 ** 32 - 1).optional(),
    rules: z.array(z.unknown()).max(MAX_RULES, { error: `at most ${MAX_RULES} rules` }),
  })
  .strict();

const pathText = (path: ReadonlyArray<PropertyKey>) =>
  path.reduce<string>((text, key) => (typeof key === 'number' ? `${text}[${key}]` : text === '' ? String(key) : `${text}.${String(key)}`), '');

/** Deeper than `max` levels of arrays and objects? Walked without recursion. */
function deeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (item === null || typeof item !== 'object') continue;
    if (depth >= max) return true;
    for (const inner of Object.values(item)) stack.push([inner, depth + 1]);
  }
  return false;
}

export function loadScenario(file: string): RuleInput[] {
  const hint = { hint: 'A scenario is {"rules": [{"operation": "PlaceOrder", "nth": 2, "effect": "drop-after"}, ...]} in YAML or JSON; see docs/serve.md. Nothing was served.' };
  let text: string;
  try {
    const size = statSync(file).size;
    if (size > MAX_SCENARIO_BYTES)
      throw new UsageError(`--scenario ${file}: ${size.toLocaleString('en-US')} bytes is too large; a scenario file is at most ${MAX_SCENARIO_BYTES / 1024 / 1024} MiB (${MAX_RULES} rules)`, hint);
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`--scenario ${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? 'unknown error'})`);
  }
  const lines = new LineCounter();
  let doc: ReturnType<typeof parseDocument>;
  try {
    doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false });
  } catch (error) {
    // The parser recurses once per level of nesting: a file of 100,000 `[` runs it out of stack.
    if (error instanceof RangeError) throw new UsageError(`--scenario ${file}: nested too deeply to read (a scenario has at most ${MAX_DEPTH} levels)`, hint);
    throw error;
  }
  if (doc.errors.length > 0) {
    if (doc.errors.some((e) => /call stack/i.test(e.message))) throw new UsageError(`--scenario ${file}: nested too deeply to read (a scenario has at most ${MAX_DEPTH} levels)`, hint);
    const first = doc.errors[0]!;
    const line = lines.linePos(first.pos[0]).line;
    throw new UsageError(`--scenario ${file}:${line}: not valid YAML or JSON: ${first.message.split('\n')[0]}`);
  }
  const lineOf = (path: ReadonlyArray<PropertyKey>): number => {
    // The deepest node of the path that exists: a missing field is reported at its rule.
    for (let n = path.length; n >= 0; n--) {
      const node = doc.getIn(path.slice(0, n) as Array<string | number>, true) as { range?: [number, number, number] } | undefined;
      const parent = n > 0 ? (doc.getIn(path.slice(0, n - 1) as Array<string | number>, true) as unknown) : undefined;
      // A key's line is better than its value's for a field (a value may start on the next line).
      if (n > 0 && isMap(parent)) {
        const pair = parent.items.find((item) => (item.key as { value?: unknown } | null)?.value === path[n - 1]);
        const range = (pair?.key as { range?: [number, number, number] } | undefined)?.range;
        if (range) return lines.linePos(range[0]).line;
      }
      if (node?.range && (n === 0 || isSeq(parent) || !isMap(parent))) return lines.linePos(node.range[0]).line;
    }
    return 1;
  };
  const fail = (path: ReadonlyArray<PropertyKey>, message: string): never => {
    throw new UsageError(`--scenario ${file}:${lineOf(path)}: ${pathText(path) || 'the file'}: ${message}`, hint);
  };
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIASES });
  } catch (error) {
    if (/alias/i.test((error as Error).message))
      throw new UsageError(`--scenario ${file}: its aliases (*name) expand to more than ${MAX_ALIASES} copies: refused as a resource exhaustion attack (a "billion laughs")`, hint);
    if (error instanceof RangeError) throw new UsageError(`--scenario ${file}: nested too deeply to read (a scenario has at most ${MAX_DEPTH} levels)`, hint);
    throw error;
  }
  if (deeperThan(value, MAX_DEPTH)) throw new UsageError(`--scenario ${file}: nested more than ${MAX_DEPTH} levels deep; a scenario has a list of rules of plain fields`, hint);
  const top = ScenarioFile.safeParse(value);
  if (!top.success) {
    const issue = top.error.issues[0]!;
    return fail(issue.path, issue.message);
  }
  return top.data.rules.map((raw, index) => {
    const rule = RuleInput.safeParse(raw);
    if (!rule.success) {
      const issue = rule.error.issues[0]!;
      return fail(['rules', index, ...issue.path], issue.message);
    }
    return rule.data.probability !== undefined && rule.data.seed === undefined && top.data.seed !== undefined
      ? { ...rule.data, seed: top.data.seed + index }
      : rule.data;
  });
}
