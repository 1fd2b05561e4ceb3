/**
 * What a desk's ledger could not record when it was sent: an exit or a reducing order let through
 * while the PostgreSQL server was unreachable (src/guard/guard.ts, ledgerDown), and outcomes of
 * lines already journaled whose record failed. Each is appended, one JSON line, to a file of this
 * process in `guard-spool/` of the data directory, before the send (the line) and after it (its
 * outcome), and written to the server by the next process of this machine that opens the ledger
 * (src/guard/postgres-ledger.ts, drain): nothing sent is missing from the journal once the server
 * is back. Each line has a key of its own, stored with it, so a spool written twice (a process
 * killed between the commit and the removal of its file) adds nothing twice.
 */
import { randomBytes } from '../common/random.js';
import { appendFileSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { NewJournalLine, Outcome, SettleFields } from './ledger.js';

/** A journal line sent without the ledger. */
export interface SpooledLine {
  type: 'line';
  key: string;
  line: NewJournalLine;
}

/** An outcome: of a spooled line (by its key), or of a line the ledger holds (by its id). */
export interface SpooledOutcome {
  type: 'settle';
  ref: { key: string } | { id: number };
  outcome: Outcome;
  fields: SettleFields;
}

export type SpoolEntry = SpooledLine | SpooledOutcome;

export interface Spool {
  readonly dir: string;
  /** Appends a line (before its send); returns its key. */
  line(line: NewJournalLine): string;
  settle(ref: SpooledOutcome['ref'], outcome: Outcome, fields: SettleFields): void;
}

export function createSpool(dir: string, machine: string): Spool {
  const file = join(dir, `${safe(machine)}-${process.pid}-${randomBytes(4).toString('hex')}.jsonl`);
  const append = (entry: SpoolEntry) => {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // One write of a whole line, appended: processes never share this file, and a crash leaves whole lines.
    appendFileSync(file, `${JSON.stringify(entry)}\n`, { mode: 0o600 });
  };
  return {
    dir,
    line(line) {
      const key = `${safe(machine)}:${process.pid}:${randomBytes(8).toString('hex')}`;
      append({ type: 'line', key, line });
      return key;
    },
    settle: (ref, outcome, fields) => append({ type: 'settle', ref, outcome, fields }),
  };
}

/** A file a drainer claimed and never finished: its process is gone. */
function abandoned(name: string): boolean {
  const pid = /\.jsonl\.draining-(\d+)-/.exec(name)?.[1];
  if (pid === undefined) return false;
  try {
    process.kill(Number(pid), 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

const safe = (text: string) => text.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 64) || 'machine';

/** A spool file taken for draining: its entries, and what to do once they are stored (or not). */
export interface Claimed {
  entries: SpoolEntry[];
  /** Stored: the file goes. */
  done(): void;
  /** Not stored: the file is given back, for the next drain. */
  giveBack(): void;
}

/**
 * The spool files of the directory, each claimed by a rename (of processes draining at once, one
 * gets each file). A file whose process is still writing is claimed too: its next entry starts a
 * new file, drained next time.
 */
export function claimSpool(dir: string): Claimed[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => name.endsWith('.jsonl') || abandoned(name));
  } catch {
    return [];
  }
  const claimed: Claimed[] = [];
  for (const name of names) {
    const from = join(dir, name.replace(/\.draining-.*$/, ''));
    const source = join(dir, name);
    const taken = `${from}.draining-${process.pid}-${randomBytes(4).toString('hex')}`;
    try {
      renameSync(source, taken);
    } catch {
      continue; // another process took it
    }
    const entries = readFileSync(taken, 'utf8')
      .split('\n')
      .filter((text) => text.trim() !== '')
      .flatMap((text) => {
        try {
          return [JSON.parse(text) as SpoolEntry];
        } catch {
          return []; // a line cut short by a full disk: nothing to record
        }
      });
    claimed.push({
      entries,
      done: () => rmSync(taken, { force: true }),
      giveBack: () => renameSync(taken, from),
    });
  }
  return claimed;
}
