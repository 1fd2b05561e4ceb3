/**
 * A scenario file (`trade serve --scenario FILE`): YAML or JSON (JSON is read by the same YAML
 * parser, which keeps every node's place in the text), checked whole before anything is served.
 * A bad file is a UsageError (exit 2) naming the file, the line and the field.
 */
import { readFileSync } from 'node:fs';
import { isMap, isSeq, LineCounter, parseDocument } from 'yaml';
import * as z from 'zod';
import { UsageError } from '../../order/errors.js';
import { RuleInput } from './rules.js';

const ScenarioFile = z
  .object({
    /** The default seed of the rules with a probability and no seed of their own. */
    seed: z.number().int().min(0).max(2 ** 32 - 1).optional(),
    rules: z.array(z.unknown()),
  })
  .strict();

const pathText = (path: ReadonlyArray<PropertyKey>) =>
  path.reduce<string>((text, key) => (typeof key === 'number' ? `${text}[${key}]` : text === '' ? String(key) : `${text}.${String(key)}`), '');

export function loadScenario(file: string): RuleInput[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`--scenario ${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? 'unknown error'})`);
  }
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false });
  if (doc.errors.length > 0) {
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
    throw new UsageError(`--scenario ${file}:${lineOf(path)}: ${pathText(path) || 'the file'}: ${message}`, {
      hint: 'A scenario is {"rules": [{"operation": "PlaceOrder", "nth": 2, "effect": "drop-after"}, ...]} in YAML or JSON; see README "Testing your scripts against trade serve". Nothing was served.',
    });
  };
  const value: unknown = doc.toJS();
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
