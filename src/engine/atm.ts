/**
 * ATM strategy templates and the brackets they put around a filled entry: a STOPMARKET
 * stop-loss and a LIMIT profit-target for the filled quantity, in one OCO group, at distances in
 * ticks from the entry's fill price. Brackets take the entry's time in force.
 */
import { RejectedError } from '../common/errors.js';
import type { Action } from '../service/order.js';
import type { Core } from './core.js';
import { noteWorkingDay } from './expiry.js';
import { type OrderRow, type TemplateRow, toTemplate } from './queries.js';
import type { AtmTemplate } from './types.js';

export function templateNotFound(name: string): RejectedError {
  return new RejectedError(`ATM strategy template '${name}' not found`, { code: 'atm_template_not_found' });
}

export function findTemplate(core: Core, name: string): TemplateRow {
  const row = core.q.template.get(name);
  if (!row) throw templateNotFound(name);
  return row;
}

export function addTemplate(core: Core, template: AtmTemplate, time: string): AtmTemplate {
  const existing = core.q.template.get(template.name);
  if (existing) throw new RejectedError(`ATM strategy template '${existing.name}' already exists`, { code: 'atm_template_exists' });
  core.q.addTemplate.run(template.name, template.stopLossTicks, template.profitTargetTicks, template.tickSize, time);
  return toTemplate(core.q.template.get(template.name)!);
}

export function removeTemplate(core: Core, name: string): AtmTemplate {
  const row = findTemplate(core, name);
  core.q.removeTemplate.run(row.name);
  return toTemplate(row);
}

/** Cleans float noise from tick arithmetic (4500.1 + 3 × 0.1), and keeps a bracket above zero. */
function bracketPrice(raw: number, tickSize: number): number {
  return Math.max(tickSize, Number(raw.toFixed(9)));
}

/** The stop-loss and profit-target prices for an entry filled at `price`. */
export function bracketPrices(
  entryAction: Action,
  price: number,
  distances: { stopLossTicks: number; profitTargetTicks: number; tickSize: number },
): { stopPrice: number; targetPrice: number } {
  const direction = entryAction === 'BUY' ? 1 : -1;
  const { stopLossTicks, profitTargetTicks, tickSize } = distances;
  return {
    stopPrice: bracketPrice(price - direction * stopLossTicks * tickSize, tickSize),
    targetPrice: bracketPrice(price + direction * profitTargetTicks * tickSize, tickSize),
  };
}

/** Places the brackets of an ATM entry that has just filled at `price`; returns them, stop first. */
export function placeBrackets(core: Core, entry: OrderRow, price: number, time: string): OrderRow[] {
  const { stopPrice, targetPrice } = bracketPrices(entry.action, price, {
    stopLossTicks: entry.atm_stop_loss_ticks!,
    profitTargetTicks: entry.atm_profit_target_ticks!,
    tickSize: entry.atm_tick_size!,
  });
  const common = {
    account: entry.account,
    instrument: entry.instrument,
    action: (entry.action === 'BUY' ? 'SELL' : 'BUY') as Action,
    quantity: entry.quantity,
    timeInForce: entry.time_in_force,
    ocoId: `ATM-${entry.order_id}`,
    strategy: null,
    parentId: entry.id,
    atmStopLossTicks: null,
    atmProfitTargetTicks: null,
    atmTickSize: null,
    now: time,
  };
  const stopId = core.makeId();
  const targetId = core.makeId();
  const stop = { ...common, id: stopId, orderId: stopId, orderType: 'STOPMARKET' as const, limitPrice: null, stopPrice, origin: 'atm-stop-loss' as const };
  const target = { ...common, id: targetId, orderId: targetId, orderType: 'LIMIT' as const, limitPrice: targetPrice, stopPrice: null, origin: 'atm-profit-target' as const };
  core.q.insertOrder.run(stop);
  core.q.insertOrder.run(target);
  noteWorkingDay(core, stop);
  noteWorkingDay(core, target);
  return [core.q.orderById.get(stop.id)!, core.q.orderById.get(target.id)!];
}
