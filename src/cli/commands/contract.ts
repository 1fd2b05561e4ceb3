/**
 * `trade contract list` and `trade contract set ROOT`: the contract table the simulator trades
 * by (tick, point value, daily close: service-reference.md §10) and the simulator's own settings
 * per root — a commission per contract on every fill, slippage in ticks on market and stop fills.
 */
import { UsageError } from '../../order/errors.js';
import { CONTRACTS, contractSpec, tickValue } from '../../service/contracts.js';
import type { ContractSettings } from '../../engine/types.js';
import { requireEmbedded } from '../call.js';
import { using, type CommandContext } from '../context.js';
import { formatMoney } from '../format.js';
import { table } from '../io.js';

export interface ContractSetOptions {
  commission?: string;
  slippage?: string;
  json?: boolean;
}

const MONTH_CODES = 'FGHJKMNQUVXZ';

export async function runContractList(ctx: CommandContext, options: { json?: boolean }): Promise<void> {
  await requireEmbedded(ctx, 'contract list');
  const settings = await using(await ctx.openEngine(), (engine) => engine.contractSettings());
  const of = (root: string): ContractSettings => settings.find((s) => s.root === root) ?? { root, commission: 0, slippageTicks: 0 };
  const contracts = Object.values(CONTRACTS).map((spec) => ({
    root: spec.root,
    name: spec.name,
    exchange: spec.exchange,
    tickSize: spec.tickSize,
    pointValue: spec.pointValue,
    tickValue: tickValue(spec),
    currency: spec.currency,
    months: spec.months.map((m) => MONTH_CODES[m - 1]).join(''),
    dayEnd: spec.dayEnd,
    commission: of(spec.root).commission,
    slippageTicks: of(spec.root).slippageTicks,
  }));
  if (options.json) {
    ctx.io.out(JSON.stringify({ contracts, success: true }));
    return;
  }
  const rows = contracts.map((c) => [c.root, c.name, String(c.tickSize), String(c.pointValue), formatMoney(c.tickValue), c.currency, c.months, c.dayEnd, formatMoney(c.commission), String(c.slippageTicks)]);
  for (const line of table(['ROOT', 'NAME', 'TICK', 'POINT VALUE', 'TICK VALUE', 'CCY', 'MONTHS', 'CLOSE', 'COMMISSION', 'SLIPPAGE'], rows)) ctx.io.out(line);
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
  if (!contractSpec(root))
    throw new UsageError(`Unknown root '${rawRoot}': the contract table has ${Object.keys(CONTRACTS).join(', ')}`, { hint: 'Nothing was changed.' });
  if (options.commission === undefined && options.slippage === undefined)
    throw new UsageError('Give --commission, --slippage or both', { hint: "Nothing was changed. Run 'trade contract set --help' for examples." });
  const commission = options.commission === undefined ? undefined : parseSetting('--commission', options.commission, 1000, false);
  const slippageTicks = options.slippage === undefined ? undefined : parseSetting('--slippage', options.slippage, 100, true);
  await requireEmbedded(ctx, 'contract set');
  const settings = await using(await ctx.openEngine(), (engine) => engine.setContractSettings(root, { commission, slippageTicks }));
  if (options.json) ctx.io.out(JSON.stringify({ ...settings, success: true }));
  else ctx.io.out(`${root}: commission ${formatMoney(settings.commission)} per contract, slippage ${settings.slippageTicks} tick${settings.slippageTicks === 1 ? '' : 's'} on market and stop fills`);
}
