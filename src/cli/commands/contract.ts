/**
 * `trade contract list` and `trade contract set ROOT`: the contract table the simulator trades
 * by (tick, point value, daily close: service-reference.md §10) and the simulator's own settings
 * per root — a commission per contract on every fill, slippage in ticks on market and stop fills.
 */
import { UsageError } from '../../common/errors.js';
import { CONTRACTS, tickValue, userContract } from '../../service/contracts.js';
import { onGrid } from '../../engine/price-feed.js';
import type { ContractSettings } from '../../engine/types.js';
import { requireEmbedded } from '../call.js';
import { using, type CommandContext } from '../context.js';
import { formatMoney, formatPrice } from '../format.js';
import { table } from '../io.js';

export interface ContractSetOptions {
  commission?: string;
  slippage?: string;
  json?: boolean;
}

const MONTH_CODES = 'FGHJKMNQUVXZ';

export async function runContractList(ctx: CommandContext, options: { json?: boolean }): Promise<void> {
  await requireEmbedded(ctx, 'contract list');
  const { settings, specs } = await using(await ctx.openEngine(), (engine) => ({ settings: engine.contractSettings(), specs: engine.contracts() }));
  const of = (root: string): ContractSettings => settings.find((s) => s.root === root) ?? { root, commission: 0, slippageTicks: 0 };
  const contracts = specs.map((spec) => ({
    root: spec.root,
    name: spec.name,
    exchange: spec.exchange,
    tickSize: spec.tickSize,
    pointValue: spec.pointValue,
    tickValue: tickValue(spec),
    currency: spec.currency,
    months: spec.months.map((m) => MONTH_CODES[m - 1]).join(''),
    dayEnd: spec.dayEnd,
    demoPrice: spec.demoPrice ?? null,
    custom: spec.custom === true,
    commission: of(spec.root).commission,
    slippageTicks: of(spec.root).slippageTicks,
  }));
  if (options.json) {
    ctx.io.out(JSON.stringify({ contracts, success: true }));
    return;
  }
  const rows = contracts.map((c) => [c.root + (c.custom ? ' *' : ''), c.name, String(c.tickSize), String(c.pointValue), formatMoney(c.tickValue), c.currency, c.months, c.dayEnd, c.demoPrice === null ? '—' : formatPrice(c.demoPrice), formatMoney(c.commission), String(c.slippageTicks)]);
  for (const line of table(['ROOT', 'NAME', 'TICK', 'POINT VALUE', 'TICK VALUE', 'CCY', 'MONTHS', 'CLOSE', 'DEMO PRICE', 'COMMISSION', 'SLIPPAGE'], rows)) ctx.io.out(line);
  if (contracts.some((c) => c.custom)) ctx.io.out('* added or overridden with trade contract add');
}

function parseSetting(flag: string, text: string, max: number, whole: boolean): number {
  const pattern = whole ? /^\s*\d+\s*$/ : /^\s*\d+(\.\d+)?\s*$/;
  const value = pattern.test(text) ? Number(text) : NaN;
  if (!Number.isFinite(value) || value < 0 || value > max)
    throw new UsageError(`${flag} must be ${whole ? 'a whole number' : 'a number'} from 0 to ${max}, got '${text}'`, { hint: 'Nothing was changed.' });
  return value;
}

export async function runContractSet(ctx: CommandContext, rawRoot: string, options: ContractSetOptions): Promise<void> {
  const root = rawRoot.trim().toUpperCase();
  await requireEmbedded(ctx, 'contract set');
  const known = await using(await ctx.openEngine(), (engine) => engine.contracts().map((c) => c.root));
  if (!known.includes(root))
    throw new UsageError(`Unknown root '${rawRoot}': the simulator knows ${known.join(', ')}`, { hint: 'Nothing was changed. Add a root with trade contract add.' });
  if (options.commission === undefined && options.slippage === undefined)
    throw new UsageError('Give --commission, --slippage or both', { hint: "Nothing was changed. Run 'trade contract set --help' for examples." });
  const commission = options.commission === undefined ? undefined : parseSetting('--commission', options.commission, 1000, false);
  const slippageTicks = options.slippage === undefined ? undefined : parseSetting('--slippage', options.slippage, 100, true);
  await requireEmbedded(ctx, 'contract set');
  const settings = await using(await ctx.openEngine(), (engine) => engine.setContractSettings(root, { commission, slippageTicks }));
  if (options.json) ctx.io.out(JSON.stringify({ ...settings, success: true }));
  else ctx.io.out(`${root}: commission ${formatMoney(settings.commission)} per contract, slippage ${settings.slippageTicks} tick${settings.slippageTicks === 1 ? '' : 's'} on market and stop fills`);
}

export interface ContractAddOptions {
  tickSize: string;
  pointValue: string;
  name?: string;
  exchange?: string;
  months?: string;
  close?: string;
  demoPrice?: string;
  json?: boolean;
}

const nothing = { hint: 'Nothing was changed.' };

function positiveNumber(flag: string, text: string, max: number): number {
  const value = /^\s*\d+(\.\d+)?\s*$/.test(text) ? Number(text) : NaN;
  if (!Number.isFinite(value) || value <= 0 || value > max) throw new UsageError(`${flag} must be a number above 0 and at most ${max}, got '${text}'`, nothing);
  return value;
}

/** `HMUZ` or `3,6,9,12` to months ascending. */
function parseMonths(text: string | undefined): number[] {
  if (text === undefined) return [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
  const trimmed = text.trim().toUpperCase();
  const months = /^[FGHJKMNQUVXZ]+$/.test(trimmed)
    ? [...trimmed].map((code) => MONTH_CODES.indexOf(code) + 1)
    : /^\d{1,2}(\s*,\s*\d{1,2})*$/.test(trimmed)
      ? trimmed.split(',').map((m) => Number(m.trim()))
      : [];
  if (months.length === 0 || months.some((m) => m < 1 || m > 12))
    throw new UsageError(`--months must be month codes (${MONTH_CODES}: HMUZ) or numbers 1-12 (3,6,9,12), got '${text}'`, nothing);
  return [...new Set(months)].sort((a, b) => a - b);
}

function shortText(flag: string, text: string | undefined, fallback: string): string {
  if (text === undefined) return fallback;
  const trimmed = text.trim();
  if (!/^[\x20-\x7e]{1,60}$/.test(trimmed)) throw new UsageError(`${flag} must be 1 to 60 printable characters, got '${text}'`, nothing);
  return trimmed;
}

export async function runContractAdd(ctx: CommandContext, rawRoot: string, options: ContractAddOptions): Promise<void> {
  const root = rawRoot.trim().toUpperCase();
  if (!/^[A-Z0-9]{1,12}$/.test(root)) throw new UsageError(`The root must be 1 to 12 letters and digits, got '${rawRoot}'`, nothing);
  const tickSize = positiveNumber('--tick-size', options.tickSize, 1_000_000);
  const pointValue = positiveNumber('--point-value', options.pointValue, 100_000_000);
  const months = parseMonths(options.months);
  const close = options.close?.trim() ?? '16:00';
  const at = /^(\d\d):(\d\d)$/.exec(close);
  if (!at || Number(at[1]) > 23 || Number(at[2]) > 59) throw new UsageError(`--close must be a time HH:MM (America/Chicago), got '${options.close}'`, nothing);
  let demoPrice: number | undefined;
  if (options.demoPrice !== undefined) {
    demoPrice = positiveNumber('--demo-price', options.demoPrice, 1e12);
    // The root is not in the table yet: its price is checked against the tick just given.
    if (!onGrid(demoPrice, tickSize)) throw new UsageError(`--demo-price ${demoPrice} is not a multiple of the tick size ${tickSize}`, nothing);
  }
  const spec = userContract({
    root,
    name: shortText('--name', options.name, root),
    exchange: shortText('--exchange', options.exchange, 'CME'),
    tickSize,
    pointValue,
    months,
    dayEnd: close,
    demoPrice,
  });
  await requireEmbedded(ctx, 'contract add');
  const added = await using(await ctx.openEngine(), (engine) => engine.addContract(spec));
  const overrides = Object.hasOwn(CONTRACTS, root);
  if (options.json) ctx.io.out(JSON.stringify({ ...added, success: true }));
  else
    ctx.io.out(
      `${overrides ? 'Overrode' : 'Added'} ${root}: tick ${tickSize}, point value ${pointValue} (${formatMoney(tickSize * pointValue)} a tick), months ${months.map((m) => MONTH_CODES[m - 1]).join('')}, close ${close}${spec.demoPrice === undefined ? '' : `, demo price ${formatPrice(spec.demoPrice)}`}`,
    );
}

export async function runContractRemove(ctx: CommandContext, rawRoot: string, options: { json?: boolean }): Promise<void> {
  const root = rawRoot.trim().toUpperCase();
  await requireEmbedded(ctx, 'contract remove');
  const removed = await using(await ctx.openEngine(), (engine) => engine.removeContract(root));
  if (!removed) throw new UsageError(`${root} was not added with trade contract add: there is nothing to remove`, nothing);
  if (options.json) ctx.io.out(JSON.stringify({ root, removed, success: true }));
  else ctx.io.out(Object.hasOwn(CONTRACTS, root) ? `Removed your ${root}: the table's ${root} applies again` : `Removed ${root}`);
}
