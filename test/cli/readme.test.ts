/**
 * README and the manual (docs/) against the command tree: every `trade ...` command line they show
 * names commands that exist, exactly (`trade order` is not `trade orders`), with flags those
 * commands take; every command of the tree is named somewhere; README's first commands run as
 * written; and no link or anchor is broken (remark-validate-links, offline).
 */
import { spawnSyncRecorded } from '../helpers/spawn.js';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { Command, Option } from 'commander';
import { afterAll, describe, expect, it } from 'vitest';
import { createContext } from '../../src/cli/context.js';
import { createIo } from '../../src/cli/io.js';
import { buildProgram } from '../../src/cli/program.js';
import { runCli, tempHome } from '../helpers/cli.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const text = (page: string) => readFileSync(join(ROOT, page), 'utf8');

interface Node {
  path: string;
  /** Each flag the command takes, and whether it takes a value (`--account <name>`). */
  flags: Map<string, boolean>;
  children: Map<string, Node>;
}

/** The command tree as commander builds it: names and aliases, each command's flags. */
function tree(): Node {
  const io = createIo({ stdin: new PassThrough(), stdout: { write: () => true }, stderr: { write: () => true } }, {});
  const program = buildProgram(createContext(io, {}), io);
  const visit = (command: Command, path: string): Node => {
    const flags = new Map<string, boolean>([['-h', false], ['--help', false]]);
    for (const o of command.options as Option[]) for (const f of [o.long, o.short]) if (f) flags.set(f, o.required || o.optional);
    const node: Node = { path, flags, children: new Map() };
    for (const child of command.commands) {
      const sub = visit(child, path === '' ? child.name() : `${path} ${child.name()}`);
      for (const name of [child.name(), ...child.aliases()]) node.children.set(name, sub);
    }
    return node;
  };
  return visit(program, '');
}

const TREE = tree();

/** Shell words of a line, as bash splits them (quotes joined, a comment dropped); `|`, `;`, `&&` as words. */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === "'" || c === '"') {
      const end = line.indexOf(c, i + 1);
      word = (word ?? '') + line.slice(i + 1, end < 0 ? undefined : end);
      i = end < 0 ? line.length : end;
    } else if (c === '#' && word === undefined) break;
    else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if ((c === '|' || c === ';' || c === '&' || c === '(' || c === ')' || c === '`') && !(c === '&' && line[i + 1] === '>')) {
      if (word !== undefined) words.push(word);
      words.push('|');
      word = undefined;
    } else word = (word ?? '') + c;
  }
  if (word !== undefined) words.push(word);
  return words;
}

/** A page's fenced code blocks: each one's language (after the fence) and lines. */
function blocks(page: string): Array<{ lang: string; lines: string[] }> {
  const out: Array<{ lang: string; lines: string[] }> = [];
  let open: { lang: string; lines: string[] } | undefined;
  for (const line of text(page).split('\n')) {
    if (line.startsWith('```')) {
      if (open) out.push(open);
      open = open ? undefined : { lang: line.slice(3).trim(), lines: [] };
    } else open?.lines.push(line);
  }
  return out;
}

/**
 * The command lines of a page's sh code blocks, a line continued with a backslash joined to the
 * next, and the `$ trade ...` lines of its other blocks (a terminal session, its output around them).
 */
function shLines(page: string): string[] {
  const out: string[] = [];
  for (const block of blocks(page)) {
    if (block.lang !== 'sh') {
      out.push(...block.lines.filter((l) => l.startsWith('$ trade ')).map((l) => l.slice(2)));
      continue;
    }
    let pending = '';
    for (const line of block.lines) {
      if (line.endsWith('\\')) pending += `${line.slice(0, -1)} `;
      else {
        if ((pending + line).trim() !== '') out.push(pending + line);
        pending = '';
      }
    }
  }
  return out;
}

/**
 * What is wrong with one `trade` invocation (its words after `trade`): a word where a command is
 * expected that names none, or a flag that neither the command nor any above it takes. A word in
 * capitals (COMMAND, FILE) is a placeholder: it ends the check.
 */
function problems(words: string[]): string[] {
  let node = TREE;
  const flags = new Map(TREE.flags);
  const out: string[] = [];
  let commandsDone = false;
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    if (word === '|') break;
    if (/^[A-Z][A-Z_.]*(\.\.\.)?$/.test(word) || word.includes('...')) break;
    if (word.startsWith('-') && word !== '-') {
      const [flag, value] = word.split('=');
      if (!flags.has(flag!)) out.push(`'${flag}' is no flag of 'trade${node.path ? ` ${node.path}` : ''}'`);
      else if (flags.get(flag!) && value === undefined && !(words[i + 1] ?? '-').startsWith('-')) i += 1;
      continue;
    }
    if (commandsDone || word === 'help') {
      commandsDone = true;
      continue;
    }
    const child = node.children.get(word);
    if (child) {
      node = child;
      for (const [f, takesValue] of child.flags) flags.set(f, takesValue);
    } else {
      if (node === TREE) out.push(`'${word}' is no command of trade`);
      commandsDone = true;
    }
  }
  return out;
}

/** Every `trade ...` invocation in a page's sh blocks and code spans, with what is wrong with it. */
function invocations(page: string): Array<{ page: string; line: string; problems: string[] }> {
  const spans = [...text(page).replaceAll(/```[\s\S]*?```/g, '').matchAll(/`(trade [^`]+)`/g)].map((m) => m[1]!.replace(/\\$/, ''));
  const out: Array<{ page: string; line: string; problems: string[] }> = [];
  for (const line of [...shLines(page), ...spans]) {
    const words = shellWords(line);
    words.forEach((word, i) => {
      const start = i === 0 || words[i - 1] === '|' || words[i - 1] === 'npx' || words[i - 1] === 'exec';
      if (word === 'trade' && start) out.push({ page, line, problems: problems(words.slice(i + 1)) });
    });
  }
  return out;
}

describe('README and docs/ against the command tree', () => {
  it('every trade command line they show names real commands, exactly, and flags those commands take', () => {
    const all = PAGES.flatMap(invocations);
    expect(all.length).toBeGreaterThan(300);
    expect(all.filter((i) => i.problems.length > 0)).toEqual([]);
  });

  it('the check tells a command from a longer one, and a flag of another command', () => {
    expect(problems(shellWords('orders --account Sim101'))).toEqual([]);
    expect(problems(shellWords('order 2ea6 --all'))).toEqual(["'--all' is no flag of 'trade order'"]);
    expect(problems(shellWords('orders --active'))).toEqual([]);
    expect(problems(shellWords('ordes --account Sim101'))).toEqual(["'ordes' is no command of trade", "'--account' is no flag of 'trade'"]);
    expect(problems(shellWords('price set "ES 09-25" 4500 --limit-price 1'))).toEqual(["'--limit-price' is no flag of 'trade price set'"]);
    expect(problems(shellWords('--profile live mcp --tier trade   # a comment --nope'))).toEqual([]);
  });

  it('every command of the tree is named in README or the manual, by its exact name', () => {
    const pages = PAGES.filter((p) => p !== 'docs/commands.md').map(text).join('\n');
    const paths: string[] = [];
    const walk = (node: Node) => {
      if (node.path !== '' && !node.path.startsWith('__') && !node.path.endsWith('help')) paths.push(node.path);
      for (const [name, child] of node.children) if (name === child.path.split(' ').at(-1)) walk(child);
    };
    walk(TREE);
    expect(paths).toContain('price source');
    const named = (path: string) => new RegExp(`trade ${path.replaceAll(' ', ' ')}(?![\\w-])`).test(pages);
    expect(paths.filter((p) => !named(p))).toEqual([]);
  });

  it('README stays a five-minute read: at most 300 lines', () => {
    expect(text('README.md').split('\n').length).toBeLessThanOrEqual(300);
  });
});

describe("README's first commands", () => {
  const { env, cleanup } = tempHome();
  afterAll(cleanup);
  const readme = text('README.md');
  const section = readme.slice(readme.indexOf('## The commands you use first'), readme.indexOf('## The manual'));
  const lines = shLines('README.md').filter((l) => section.includes(l));

  it('run as written, in order, on a fresh store, and do what their comments say', async () => {
    expect(lines).toHaveLength(12);
    const outputs: string[] = [];
    for (const line of lines) {
      const words = shellWords(line);
      expect(words[0]).toBe('trade');
      const result = await runCli(words.slice(1), env);
      expect({ line, code: result.code, stderr: result.code === 0 ? '' : result.stderr }).toEqual({ line, code: 0, stderr: '' });
      outputs.push(result.stdout);
    }
    const [, orders, price, positions, , close, quote, , , guard, , flatten] = outputs;
    expect(orders).toMatch(/ES 09-25 +BUY +1 +LIMIT +5990 .* Working/);
    expect(price).toContain('filled  BUY 1 LIMIT @ 5989.75 in Sim101');
    expect(positions).toMatch(/Sim101 +ES 09-25 +Long +1 +5989.75/);
    expect(close).toContain('Closed short 1 ES 09-25 (average price 5989.75) in Sim101');
    expect(quote).toMatch(/ES 09-25 +5989.75/);
    expect(guard).toContain('would be refused by guard max-order-qty: quantity 3 is above the limit of 2');
    expect(flatten).toContain('Nothing to flatten in Sim101');
  });
});

describe('links', () => {
  // Pages other issues write (desk mode: issue 35; mutation testing: issue 36), linked before they
  // land. Only their absence is forgiven, and only while they are absent.
  const PENDING = ['docs/desk-mode.md', 'docs/mutation-testing.md'].filter((p) => !existsSync(join(ROOT, p)));

  it('README and docs/ have no broken link or anchor (npm run docs:links)', () => {
    const script = (JSON.parse(text('package.json')) as { scripts: Record<string, string> }).scripts['docs:links']!;
    const args = shellWords(script);
    expect(args[0]).toBe('remark');
    const ran = spawnSyncRecorded(process.execPath, [join(ROOT, 'node_modules/remark-cli/cli.js'), ...args.slice(1), '--no-color'], { cwd: ROOT, encoding: 'utf8' });
    let file = '';
    const warnings: string[] = [];
    for (const line of ran.stderr.split('\n')) {
      const at = /^\s*(\d+:\d+(?:-\d+:\d+)?)\s+(?:warning|error)\s+(.*?)\s*$/.exec(line);
      if (at) warnings.push(`${file}:${at[1]} ${at[2]}`);
      else if (/^\S+\.md$/.test(line.trim())) file = line.trim();
    }
    const forgiven = (w: string) => PENDING.some((p) => w.includes(`Cannot find file \`${p}\``) || w.includes(`Cannot find file \`${p.slice('docs/'.length)}\``));
    expect(warnings.filter((w) => !forgiven(w))).toEqual([]);
    expect(ran.status === 0 || warnings.length > 0).toBe(true);
  });
});
