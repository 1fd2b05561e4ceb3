import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { order, rejection, testEngine, type TestEngine } from '../helpers/engine.js';

let t: TestEngine;
beforeEach(() => (t = testEngine()));
afterEach(() => t.cleanup());

const stateOf = (id: string) => t.engine.listOrders().find((o) => o.id === id)?.state;
const scalp = { name: 'Scalp', stopLossTicks: 8, profitTargetTicks: 16, tickSize: 0.25 };

describe('OCO groups', () => {
  it('cancels the rest of the group when one fills', () => {
    t.engine.setPrice('ES 09-25', 100);
    const up = t.engine.placeOrder(order({ action: 'SELL', orderType: 'LIMIT', limitPrice: 105, ocoId: 'g' })).orderId;
    const down = t.engine.placeOrder(order({ action: 'SELL', orderType: 'STOPMARKET', stopPrice: 95, ocoId: 'g' })).orderId;
    const other = t.engine.placeOrder(order({ instrument: 'NQ 12-25', orderType: 'LIMIT', limitPrice: 1, ocoId: 'g' })).orderId;
    const outcome = t.engine.setPrice('ES 09-25', 106);
    expect(outcome.fills.map((f) => f.orderId)).toEqual([up]);
    expect(outcome.cancelledOrderIds).toEqual([down, other]);
    expect([stateOf(up), stateOf(down), stateOf(other)]).toEqual(['FILLED', 'CANCELLED', 'CANCELLED']);
  });

  it('fills only the oldest when several orders of a group cross on one price', () => {
    t.engine.setPrice('ES 09-25', 100);
    const first = t.engine.placeOrder(order({ orderType: 'LIMIT', limitPrice: 97, ocoId: 'g' })).orderId;
    const second = t.engine.placeOrder(order({ orderType: 'LIMIT', limitPrice: 99, ocoId: 'g' })).orderId;
    const outcome = t.engine.setPrice('ES 09-25', 96);
    expect(outcome.fills.map((f) => f.orderId)).toEqual([first]);
    expect(stateOf(second)).toBe('CANCELLED');
    expect(t.engine.getPosition('Sim101', 'ES 09-25')?.quantity).toBe(1);
  });

  it('cancels the rest of the group when one is cancelled', () => {
    const a = t.engine.placeOrder(order({ orderType: 'LIMIT', limitPrice: 90, ocoId: 'g' })).orderId;
    const b = t.engine.placeOrder(order({ orderType: 'LIMIT', limitPrice: 91, ocoId: 'g' })).orderId;
    expect(t.engine.cancelOrder('Sim101', b).cancelledOrderIds).toEqual([b, a]);
    expect(stateOf(a)).toBe('CANCELLED');
  });

  it('groups by account: the same id in another account is another group', () => {
    t.engine.addAccount('Sim102');
    const a = t.engine.placeOrder(order({ orderType: 'LIMIT', limitPrice: 90, ocoId: 'g' })).orderId;
    const b = t.engine.placeOrder(order({ account: 'Sim102', orderType: 'LIMIT', limitPrice: 90, ocoId: 'g' })).orderId;
    t.engine.cancelOrder(undefined, a);
    expect(stateOf(b)).toBe('WORKING');
  });

  it('refuses to reuse the id of a finished group, changing nothing', () => {
    const a = t.engine.placeOrder(order({ orderType: 'LIMIT', limitPrice: 90, ocoId: 'g1' })).orderId;
    t.engine.cancelOrder('Sim101', a);
    const before = t.snapshot();
    const error = rejection(() => t.engine.placeOrder(order({ orderType: 'LIMIT', limitPrice: 91, ocoId: 'g1' })));
    expect(error.message).toBe("Invalid request: ocoId: group 'g1' has no active order; use a new id");
    expect(t.snapshot()).toEqual(before);
  });

  it('lets orders join a group that is still working', () => {
    t.engine.placeOrder(order({ orderType: 'LIMIT', limitPrice: 90, ocoId: 'g' }));
    expect(t.engine.placeOrder(order({ orderType: 'LIMIT', limitPrice: 91, ocoId: 'g' })).order.state).toBe('WORKING');
  });

  it('a MARKET order joining a group fills and cancels the rest', () => {
    const a = t.engine.placeOrder(order({ orderType: 'LIMIT', limitPrice: 90, ocoId: 'g' })).orderId;
    const outcome = t.engine.placeOrder(order({ ocoId: 'g' }));
    expect(outcome.cancelledOrderIds).toEqual([a]);
  });
});

describe('ATM strategy templates', () => {
  it('adds, lists and removes templates; names match in any case', () => {
    expect(t.engine.addAtmTemplate(scalp)).toEqual(scalp);
    t.engine.addAtmTemplate({ name: 'Alpha', stopLossTicks: 4, profitTargetTicks: 4, tickSize: 1 });
    expect(t.engine.listAtmTemplates().map((x) => x.name)).toEqual(['Alpha', 'Scalp']);
    expect(rejection(() => t.engine.addAtmTemplate({ ...scalp, name: 'SCALP' })).message).toBe(
      "ATM strategy template 'Scalp' already exists",
    );
    expect(t.engine.removeAtmTemplate('scalp')).toEqual(scalp);
    expect(rejection(() => t.engine.removeAtmTemplate('Scalp')).message).toBe("ATM strategy template 'Scalp' not found");
  });

  it('rejects an entry with an unknown template and places nothing', () => {
    t.engine.setPrice('ES 09-25', 4500);
    const before = t.snapshot();
    const error = rejection(() => t.engine.placeOrder(order({ strategy: 'Nope' })));
    expect(error.message).toBe("ATM strategy template 'Nope' not found");
    expect(t.snapshot()).toEqual(before);
  });

  it('brackets a long MARKET entry: stop below, target above, one OCO pair, for the filled quantity', () => {
    t.engine.addAtmTemplate(scalp);
    t.engine.setPrice('ES 09-25', 4500);
    const outcome = t.engine.placeOrder(order({ quantity: 3, strategy: 'scalp' }));
    expect(outcome.order).toMatchObject({ state: 'FILLED', avgFillPrice: 4500, strategy: 'Scalp' });
    const [stop, target] = outcome.bracketOrders;
    const common = { account: 'Sim101', instrument: 'ES 09-25', action: 'SELL', quantity: 3, state: 'WORKING', timeInForce: 'DAY' };
    const ocoId = `ATM-${outcome.orderId}`;
    expect(stop).toMatchObject({ ...common, orderType: 'STOPMARKET', stopPrice: 4498, ocoId, origin: 'atm-stop-loss', parentOrderId: outcome.orderId });
    expect(target).toMatchObject({ ...common, orderType: 'LIMIT', limitPrice: 4504, ocoId, origin: 'atm-profit-target' });
  });

  it('brackets a short entry the other way round', () => {
    t.engine.addAtmTemplate(scalp);
    t.engine.setPrice('ES 09-25', 4500);
    const [stop, target] = t.engine.placeOrder(order({ action: 'SELL', strategy: 'Scalp', timeInForce: 'GTC' })).bracketOrders;
    expect(stop).toMatchObject({ action: 'BUY', orderType: 'STOPMARKET', stopPrice: 4502, timeInForce: 'GTC' });
    expect(target).toMatchObject({ action: 'BUY', orderType: 'LIMIT', limitPrice: 4496, timeInForce: 'GTC' });
  });

  it('target fills: the stop is cancelled, the position is flat with the target P&L', () => {
    t.engine.addAtmTemplate(scalp);
    t.engine.setPrice('ES 09-25', 4500);
    const [stop, target] = t.engine.placeOrder(order({ quantity: 2, strategy: 'Scalp' })).bracketOrders;
    const outcome = t.engine.setPrice('ES 09-25', 4505);
    expect(outcome.fills).toEqual([expect.objectContaining({ orderId: target!.id, price: 4504, origin: 'atm-profit-target' })]);
    expect(outcome.cancelledOrderIds).toEqual([stop!.id]);
    expect(t.engine.getPosition('Sim101', 'ES 09-25')).toMatchObject({ quantity: 0, realizedPnl: 8 });
  });

  it('stop fills: the target is cancelled, the loss is the stop distance', () => {
    t.engine.addAtmTemplate(scalp);
    t.engine.setPrice('ES 09-25', 4500);
    const [stop, target] = t.engine.placeOrder(order({ strategy: 'Scalp' })).bracketOrders;
    const outcome = t.engine.setPrice('ES 09-25', 4490);
    expect(outcome.fills).toEqual([expect.objectContaining({ orderId: stop!.id, price: 4498 })]);
    expect(stateOf(target!.id)).toBe('CANCELLED');
    expect(t.engine.getPosition('Sim101', 'ES 09-25')).toMatchObject({ quantity: 0, realizedPnl: -2 });
  });

  it('a resting entry gets its brackets when a price fills it, priced from its fill', () => {
    t.engine.addAtmTemplate(scalp);
    t.engine.setPrice('ES 09-25', 4510);
    const entry = t.engine.placeOrder(order({ orderType: 'LIMIT', limitPrice: 4505, strategy: 'Scalp' }));
    expect(entry.bracketOrders).toEqual([]);
    const outcome = t.engine.setPrice('ES 09-25', 4506);
    expect(outcome.bracketOrders).toEqual([]);
    const filled = t.engine.setPrice('ES 09-25', 4504);
    expect(filled.fills.map((f) => f.orderId)).toEqual([entry.orderId]);
    expect(filled.bracketOrders.map((o) => o.stopPrice ?? o.limitPrice)).toEqual([4503, 4509]);
  });

  it('when the same move carries through the stop, the stop fills at its price and the target is cancelled', () => {
    t.engine.addAtmTemplate(scalp);
    t.engine.setPrice('ES 09-25', 4510);
    t.engine.placeOrder(order({ orderType: 'LIMIT', limitPrice: 4505, strategy: 'Scalp' }));
    const outcome = t.engine.setPrice('ES 09-25', 4500);
    expect(outcome.fills.map((f) => [f.origin, f.price])).toEqual([
      ['client', 4505],
      ['atm-stop-loss', 4503],
    ]);
    expect(outcome.cancelledOrderIds).toEqual([outcome.bracketOrders[1]!.id]);
    expect(t.engine.getPosition('Sim101', 'ES 09-25')).toMatchObject({ quantity: 0, realizedPnl: -2 });
  });

  it('rejects a MARKET entry with a template while no price is known (manual source), placing nothing', () => {
    t.engine.addAtmTemplate(scalp);
    t.engine.setPriceSource('ES', 'manual', {});
    const before = t.snapshot();
    expect(rejection(() => t.engine.placeOrder(order({ strategy: 'Scalp' }))).message).toBe(
      'Invalid request: instrument: no last price for ES 09-25 in the simulator',
    );
    expect(t.snapshot()).toEqual(before);
  });

  it('an entry keeps the distances it was placed with when its template is removed', () => {
    t.engine.addAtmTemplate(scalp);
    t.engine.placeOrder(order({ orderType: 'LIMIT', limitPrice: 4500, strategy: 'Scalp' }));
    t.engine.removeAtmTemplate('Scalp');
    const outcome = t.engine.setPrice('ES 09-25', 4500);
    expect(outcome.bracketOrders.map((o) => o.stopPrice ?? o.limitPrice)).toEqual([4498, 4504]);
  });

  it('prices brackets on the tick grid without float noise', () => {
    t.engine.addAtmTemplate({ name: 'Cl', stopLossTicks: 3, profitTargetTicks: 7, tickSize: 0.01 });
    t.engine.setPrice('CL 10-25', 63.17);
    const [stop, target] = t.engine.placeOrder(order({ instrument: 'CL 10-25', strategy: 'Cl' })).bracketOrders;
    expect([stop!.stopPrice, target!.limitPrice]).toEqual([63.14, 63.24]);
  });
});
