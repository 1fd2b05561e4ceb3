/**
 * `trade doctor`'s checks of this machine: the settings and the config file, the data directory
 * and the embedded store. Each only looks: nothing is created, migrated or chmod-ed, so a
 * broken environment is reported as it is.
 */
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Env } from '../config/paths.js';
import { readConfigFile, type Settings } from '../config/settings.js';
import type { StoreSummary } from '../engine/store.js';
import { ConfigError, ExitCode, TradeError } from '../common/errors.js';

export type CheckStatus = 'pass' | 'warn' | 'fail';

export interface Check {
  name: 'config' | 'store' | 'service' | 'ledger';
  status: CheckStatus;
  message: string;
  hint?: string;
  /** The exit code a failure stands for. */
  exitCode?: number;
}

export interface StoreReport extends Partial<StoreSummary> {
  path: string;
  exists: boolean;
  currentSchemaVersion?: number;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

const failed = (name: Check['name'], error: TradeError): Check => ({
  name,
  status: 'fail',
  // Doctor changes nothing, so the engine's "Nothing was written" says nothing here.
  message: error.message.replace(/ Nothing was written\.$/, ''),
  hint: error.hint,
  exitCode: error.exitCode,
});

/**
 * Every setting that cannot be used, each with its source, and a config file that cannot be
 * read even when no key in effect comes from it (the next `config set` would fail on it).
 */
export function configChecks(env: Env, settings: Settings): Check[] {
  const errors: ConfigError[] = settings.problems.map((p) => p.error);
  try {
    readConfigFile(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    errors.unshift(error);
  }
  const seen = new Set<string>();
  return errors.filter((e) => !seen.has(e.message) && seen.add(e.message)).map((e) => failed('config', e));
}

/** The data directory and the store in it, opened read-only. */
export async function checkStore(file: string): Promise<{ store: StoreReport; check: Check }> {
  const store: StoreReport = { path: file, exists: existsSync(file) };
  const { dataDirProblem, writeProblem } = await import('../engine/store-errors.js');
  const unusable = dataDirProblem(dirname(file)) ?? (existsSync(dirname(file)) ? writeProblem(file) : undefined);
  if (!store.exists) {
    if (unusable) return { store, check: failed('store', unusable) };
    return { store, check: { name: 'store', status: 'pass', message: `${file}: not created yet; the first command that needs it creates it` } };
  }
  const { summarizeStore, SCHEMA_VERSION } = await import('../engine/store.js');
  store.currentSchemaVersion = SCHEMA_VERSION;
  let summary: StoreSummary;
  try {
    summary = summarizeStore(file);
  } catch (error) {
    if (error instanceof TradeError) return { store, check: failed('store', error) };
    return {
      store,
      check: { name: 'store', status: 'fail', message: `${file} cannot be read: ${(error as Error).message}`, exitCode: ExitCode.rejected },
    };
  }
  Object.assign(store, summary);
  if (summary.schemaVersion > SCHEMA_VERSION)
    return {
      store,
      check: {
        name: 'store',
        status: 'fail',
        message: `${file}: schema ${summary.schemaVersion}, written by a newer trade (this one knows ${SCHEMA_VERSION})`,
        hint: 'Update trade (npm install -g trade), or point TRADE_HOME at another directory.',
        exitCode: ExitCode.rejected,
      },
    };
  // Readable is not enough: every order, price and account change writes.
  if (unusable) return { store, check: failed('store', unusable) };
  const contents = [
    plural(summary.accounts, 'account'),
    `${plural(summary.orders, 'order')} (${summary.workingOrders} working)`,
    plural(summary.openPositions, 'open position'),
    plural(summary.prices, 'price'),
    plural(summary.atmTemplates, 'ATM template'),
  ].join(', ');
  const schema =
    summary.schemaVersion === SCHEMA_VERSION
      ? `schema ${summary.schemaVersion}`
      : `schema ${summary.schemaVersion}, migrated to ${SCHEMA_VERSION} on next use`;
  return { store, check: { name: 'store', status: 'pass', message: `${file}: ${schema}; ${contents}` } };
}
