import { requireEmbedded } from '../call.js';
import { UsageError, ValidationError } from '../../common/errors.js';
import { type AtmTemplate, nameField, parseAtmTemplate } from '../../service/order.js';
import { using, type CommandContext } from '../context.js';
import { formatPrice } from '../format.js';
import { table } from '../io.js';
import { numberOrText } from '../order-flags.js';

export interface AtmAddOptions {
  stopLoss?: string;
  profitTarget?: string;
  tickSize?: string;
  json?: boolean;
}

export interface AtmOptions {
  json?: boolean;
}

const FLAG_FOR: Record<keyof AtmTemplate, string> = {
  name: 'NAME',
  stopLossTicks: '--stop-loss',
  profitTargetTicks: '--profit-target',
  tickSize: '--tick-size',
};

function describe(t: AtmTemplate): string {
  return `stop-loss ${t.stopLossTicks} ticks, profit-target ${t.profitTargetTicks} ticks, tick size ${formatPrice(t.tickSize)}`;
}

/** Flags → a validated template, or a usage error naming every missing or bad flag. */
export function templateFromFlags(name: string, options: AtmAddOptions): AtmTemplate {
  const missing = [
    options.stopLoss === undefined ? '--stop-loss' : undefined,
    options.profitTarget === undefined ? '--profit-target' : undefined,
  ].filter((f): f is string => f !== undefined);
  if (missing.length > 0) {
    throw new UsageError(`Missing required flag${missing.length === 1 ? '' : 's'}: ${missing.join(', ')}`, {
      hint: "Nothing was changed. Run 'trade atm add --help' for an example.",
    });
  }
  try {
    return parseAtmTemplate({
      name,
      stopLossTicks: numberOrText(options.stopLoss),
      profitTargetTicks: numberOrText(options.profitTarget),
      tickSize: numberOrText(options.tickSize ?? '0.25'),
    });
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    const flags = error.issues.map((i) => FLAG_FOR[i.field as keyof AtmTemplate] ?? i.field);
    throw new ValidationError(error.issues, {
      hint: `Nothing was changed. Check ${flags.join(', ')}; run 'trade atm add --help' for examples.`,
    });
  }
}

export async function runAtmAdd(ctx: CommandContext, name: string, options: AtmAddOptions): Promise<void> {
  const template = templateFromFlags(name, options);
  await requireEmbedded(ctx, 'atm add');
  const added = await using(await ctx.openEngine(), (engine) => engine.addAtmTemplate(template));
  if (options.json) ctx.io.out(JSON.stringify({ template: added, success: true }));
  else ctx.io.out(ctx.io.color.green(`Added ATM strategy template ${added.name}: ${describe(added)}`));
}

export async function runAtmList(ctx: CommandContext, options: AtmOptions): Promise<void> {
  await requireEmbedded(ctx, 'atm list');
  const templates = await using(await ctx.openEngine(), (engine) => engine.listAtmTemplates());
  if (options.json) {
    ctx.io.out(JSON.stringify({ templates, success: true }));
    return;
  }
  if (templates.length === 0) {
    ctx.io.out('No ATM strategy templates.');
    return;
  }
  const lines = table(
    ['NAME', 'STOP-LOSS TICKS', 'PROFIT-TARGET TICKS', 'TICK SIZE'],
    templates.map((t) => [t.name, String(t.stopLossTicks), String(t.profitTargetTicks), formatPrice(t.tickSize)]),
  );
  for (const line of lines) ctx.io.out(line);
}

export async function runAtmRemove(ctx: CommandContext, name: string, options: AtmOptions): Promise<void> {
  const checked = nameField('strategy name').safeParse(name);
  if (!checked.success) {
    throw new ValidationError([{ field: 'name', message: checked.error.issues[0]!.message }]);
  }
  await requireEmbedded(ctx, 'atm remove');
  const removed = await using(await ctx.openEngine(), (engine) => engine.removeAtmTemplate(checked.data));
  if (options.json) ctx.io.out(JSON.stringify({ template: removed, success: true }));
  else ctx.io.out(ctx.io.color.green(`Removed ATM strategy template ${removed.name}`));
}
