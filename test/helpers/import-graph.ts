/**
 * The imports of src/, between its top-level folders: every static, dynamic and type-only import
 * of a relative path, read by TypeScript's own pre-processor (the one tsc uses to find files), so
 * that an `import('../x.js')` inside a function counts as much as one at the top. Files directly in
 * src/ (lib.ts, the package's entry) are one node, '.'.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/** One import of one file from another folder: `cli/program.ts -> config/key-table.ts`. */
export interface FolderEdge {
  from: string;
  to: string;
  /** The files that make the edge, `a.ts -> b.ts`. */
  via: string[];
}

/** The folder a file is in, under root: `config`, or '.' for a file directly in root. */
const folderOf = (root: string, file: string): string => {
  const parts = relative(root, file).split(sep);
  return parts.length === 1 ? '.' : parts[0]!;
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|mts|cts)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Every edge between two different top-level folders of root. */
export function folderEdges(root: string): FolderEdge[] {
  const edges = new Map<string, FolderEdge>();
  for (const file of sourceFiles(root)) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    for (const { fileName } of importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const target = resolve(dirname(file), fileName.replace(/\.(m|c)?js$/, '.$1ts'));
      const from = folderOf(root, file);
      const to = folderOf(root, target);
      if (from === to) continue;
      const key = `${from} -> ${to}`;
      const edge = edges.get(key) ?? { from, to, via: [] };
      edge.via.push(`${relative(root, file)} -> ${relative(root, target)}`);
      edges.set(key, edge);
    }
  }
  return [...edges.values()];
}

/**
 * The cycles of the folder graph: each strongly connected component of more than one folder
 * (Tarjan's algorithm), its folders sorted, with the edges inside it.
 */
export function folderCycles(edges: readonly FolderEdge[]): Array<{ folders: string[]; edges: FolderEdge[] }> {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) {
    next.set(from, [...(next.get(from) ?? []), to]);
    if (!next.has(to)) next.set(to, []);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  let counter = 0;
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter++;
    stack.push(node);
    onStack.add(node);
    for (const to of next.get(node)!) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!));
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) components.push(component.sort());
    }
  };
  for (const node of [...next.keys()].sort()) if (!index.has(node)) visit(node);
  return components.map((folders) => ({ folders, edges: edges.filter((e) => folders.includes(e.from) && folders.includes(e.to)) }));
}
