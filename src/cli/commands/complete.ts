/**
 * `trade __complete SOURCE [--account NAME]`: the live values a completion script offers, one a
 * line — accounts, ATM templates, profiles, order ids, instruments. Called on every Tab, so it
 * reads only the embedded store (read-only, never created or migrated) and the config file, never
 * the network, and loads neither the engine nor the schema. A store that does not exist or cannot
 * be read answers nothing: a Tab is no place for an error.
 */
import Database from 'better-sqlite3';
import { readConfigFile } from '../../config/config-file.js';
import type { Env } from '../../config/paths.js';
import { UsageError } from '../../common/errors.js';
import { CONTRACT_ROOTS } from '../../service/contracts.js';
import { LIVE_SOURCES, type LiveSource } from '../complete-sources.js';
import type { CommandContext } from '../context.js';

export interface CompleteOptions {
  account?: string;
}

/** The most ids offered: the working ones and the most recent. */
const RECENT = 50;

type Db = InstanceType<typeof Database>;

/** Rows of one text column; an older store that lacks the table answers nothing. */
function column(db: Db | undefined, sql: string, ...params: unknown[]): string[] {
  if (!db) return [];
  try {
    return (db.prepare(sql).pluck().all(...params) as unknown[]).filter((v): v is string => typeof v === 'string');
  } catch {
    return [];
  }
}

/** The store, read-only; undefined when there is none (it is not created) or it cannot be opened. */
function openStore(file: string): Db | undefined {
  try {
    const db = new Database(file, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 200');
    return db;
  } catch {
    return undefined;
  }
}

/** The profiles of the config file, as objects of keys; none when it cannot be read. */
function profiles(env: Env): Record<string, unknown> {
  try {
    const found = readConfigFile(env).profiles as unknown;
    return found !== null && typeof found === 'object' && !Array.isArray(found) ? (found as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The accounts the config names: each profile's `account`, and TRADE_ACCOUNT. */
function configAccounts(env: Env): string[] {
  const named = Object.values(profiles(env)).map((p) => (p !== null && typeof p === 'object' ? (p as Record<string, unknown>).account : undefined));
  return [...named, env.TRADE_ACCOUNT].filter((a): a is string => typeof a === 'string' && a !== '');
}

function ofAccount(account: string | undefined): [string, unknown[]] {
  return account === undefined ? ['', []] : [' AND account = ? COLLATE NOCASE', [account]];
}

function values(source: LiveSource, env: Env, db: Db | undefined, account: string | undefined): string[] {
  const [where, params] = ofAccount(account);
  switch (source) {
    case 'accounts':
      return [...column(db, 'SELECT name FROM accounts ORDER BY name'), ...configAccounts(env)];
    case 'profiles':
      return ['default', ...Object.keys(profiles(env))];
    case 'atm-templates':
      return column(db, 'SELECT name FROM atm_templates ORDER BY name');
    case 'working-orders':
      return column(db, `SELECT order_id FROM orders WHERE state = 'WORKING'${where} ORDER BY seq DESC LIMIT ${RECENT}`, ...params);
    case 'orders':
      return column(db, `SELECT order_id FROM orders WHERE 1${where} ORDER BY state = 'WORKING' DESC, seq DESC LIMIT ${RECENT}`, ...params);
    case 'strategies':
      return column(db, `SELECT order_id FROM orders WHERE strategy IS NOT NULL${where} ORDER BY state = 'WORKING' DESC, seq DESC LIMIT ${RECENT}`, ...params);
    case 'executions':
      return column(db, `SELECT execution_id FROM fills WHERE execution_id IS NOT NULL${where} ORDER BY seq DESC LIMIT ${RECENT}`, ...params);
    case 'instruments':
      return [
        ...column(db, `SELECT instrument FROM positions WHERE quantity != 0 UNION SELECT instrument FROM orders WHERE state = 'WORKING' UNION SELECT instrument FROM prices ORDER BY 1`),
        ...CONTRACT_ROOTS,
      ];
    case 'roots':
      return [...CONTRACT_ROOTS, ...column(db, 'SELECT root FROM custom_contracts ORDER BY root')];
  }
}

export function runComplete(ctx: CommandContext, source: string, options: CompleteOptions): void {
  if (!(LIVE_SOURCES as readonly string[]).includes(source))
    throw new UsageError(`Unknown completion source '${source}': it is one of ${LIVE_SOURCES.join(', ')}`);
  const needsStore = source !== 'profiles';
  const db = needsStore ? openStore(ctx.storeFile()) : undefined;
  try {
    const found = [...new Set(values(source as LiveSource, ctx.env, db, options.account))];
    if (found.length > 0) ctx.io.stdout.write(`${found.join('\n')}\n`);
  } finally {
    db?.close();
  }
}
