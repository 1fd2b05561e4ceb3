/**
 * The alert language's values and options at their edges (docs/webhook-reference.md §2.4, §3, §4),
 * each with the exact words of its refusal or the exact value it is read as: numbers at their
 * bounds, names, sides, CHANGE and CLOSEPOSITION's fields, require_market_position, max_positions,
 * brackets, cancel_after, the alert window, delay, rate_limit, sync_strategy, accounts, the kill
 * switch. The language as a whole (format, commands, required fields, examples) is parser.test.ts
 * and examples.test.ts.
 */
import { describe, expect, test } from 'vitest';
import { AlertFailure, type Alert, type CommandAlert, parseAlert } from '../../src/alerts/message.js';
import { AlertFormatError } from '../../src/alerts/syntax.js';

const NOW = new Date('2026-05-01T15:00:00Z');
const parse = (text: string) => parseAlert(text, { now: NOW });
const BUY = 'key=k; command=PLACE; account=Sim101; instrument=ES 06-26; action=BUY; qty=1; order_type=MARKET; tif=DAY;';
const LIMIT = 'key=k; command=PLACE; account=Sim101; instrument=ES 06-26; action=BUY; qty=1; order_type=LIMIT; tif=DAY; limit_price=6000;';

function failure(text: string): string {
  try {
    parse(text);
  } catch (error) {
    if (error instanceof AlertFailure) {
      expect(error.message).toBe(`${error.code}: ${error.detail}`);
      return `${error.code}: ${error.detail}`;
    }
    if (error instanceof AlertFormatError) return `${error.code}: ${error.detail}`;
    throw error;
  }
  return 'parsed';
}

const command = (text: string): CommandAlert & Alert => {
  const alert = parse(text);
  expect(alert.kind).toBe('command');
  return alert as CommandAlert & Alert;
};
const options = (text: string) => command(text).options;

describe('§2.4 numbers at their bounds', () => {
  test.each([
    ['qty=2.0', 2],
    ['qty=2.00', 2],
    ['qty=+2', 2],
    ['qty=100000', 100_000],
  ])('%s is %i contracts', (field, quantity) => {
    expect(command(`${BUY} ${field};`).order.quantity).toBe(quantity);
  });

  test.each([
    ['qty=100001', "invalid_value: qty: '100001' is not a whole number from 1 to 100000"],
    ['qty=0', "invalid_value: qty: '0' is not a whole number from 1 to 100000"],
    ['qty=2.5', "invalid_value: qty: '2.5' is not a whole number from 1 to 100000"],
    ['delay=abc', "invalid_value: delay: 'abc' is not a number of seconds"],
    ['delay=1e1', "invalid_value: delay: '1e1' is not a number of seconds"],
    ['delay=61', 'invalid_value: delay: 61 is more than 60 seconds'],
    ['delay=60.5', 'invalid_value: delay: 60.5 is more than 60 seconds'],
  ])('%s is refused: %s', (field, message) => {
    expect(failure(`${BUY} ${field};`)).toBe(message);
  });

  test.each([
    ['delay=60', 60],
    ['delay=.5', 0.5],
    ['delay=5.', 5],
    ['delay=+3', 3],
  ])('%s waits %d seconds', (field, seconds) => {
    expect(options(`${BUY} ${field};`).delaySeconds).toBe(seconds);
  });

  test('delay=0 does not wait', () => {
    expect(options(`${BUY} delay=0;`)).toEqual({});
  });
});

describe('names, sides and the kill switch', () => {
  test('a name of 64 characters is taken, 65 or a control character is refused', () => {
    expect(options(`${BUY} strategy_tag=${'t'.repeat(64)};`).strategyTag).toBe('t'.repeat(64));
    expect(failure(`${BUY} strategy_tag=${'t'.repeat(65)};`)).toBe('invalid_value: strategy_tag: must be at most 64 printable characters');
    expect(failure(`${BUY} strategy_tag=a\u0007b;`)).toBe('invalid_value: strategy_tag: must be at most 64 printable characters');
  });

  test('FLATTEN market_position: long or short, any case, trimmed', () => {
    expect(command('key=k; command=FLATTEN; market_position= Short ;').marketPosition).toBe('short');
    expect(failure('key=k; command=FLATTEN; market_position=flat;')).toBe("invalid_value: market_position: 'flat' is not one of long, short");
    expect(command('key=k; command=FLATTEN;').marketPosition).toBeUndefined();
  });

  test('the kill switch: on or off in any case, nothing else', () => {
    expect(parse('key=k; kill_switch=ON;')).toMatchObject({ kind: 'kill_switch', on: true });
    expect(parse('key=k; kill_switch=Off;')).toMatchObject({ kind: 'kill_switch', on: false });
    expect(failure('key=k; kill_switch=maybe;')).toBe("invalid_value: kill_switch: 'maybe' is not on or off");
  });
});

describe("§3.1 PLACE's own fields", () => {
  test('oco_id, order_id and strategy (or atm_strategy) are carried; strategy_id is refused', () => {
    expect(command(`${BUY} oco_id=g1; order_id=my-1; atm_strategy=ATM 2;`).order).toMatchObject({ ocoId: 'g1', orderId: 'my-1', strategy: 'ATM 2' });
    expect(failure(`${BUY} strategy_id=s1;`)).toBe(
      'invalid_value: strategy_id on an order is not served by this server: the service API has no way to add an order to a running ATM strategy',
    );
    expect(failure(`${BUY} strategy=ATM; strategy_id=s1;`)).toBe('invalid_value: strategy and strategy_id: give one (a template to start, or a running strategy to join)');
  });

  test('a stop order needs its stop price; a price the type does not use is ignored with a warning', () => {
    expect(failure(BUY.replace('MARKET', 'STOPMARKET'))).toBe('missing_field: Check message format, missing required field: STOP_PRICE');
    const limit = command(`${LIMIT} stop_price=5990;`);
    expect(limit.order.stopPrice).toBeUndefined();
    expect(limit.order.limitPrice).toBeDefined();
    expect(limit.warnings).toEqual(['stop_price is not used by LIMIT orders; it was ignored']);
    expect(command(`${BUY.replace('MARKET', 'STOPMARKET')} stop_price=5990;`).order.stopPrice).toBeDefined();
  });
});

describe('§3.11 CHANGE', () => {
  const CHANGE = 'key=k; command=CHANGE; order_id=o-1;';
  test('needs something to change; 0 or nothing leaves a price as it is', () => {
    for (const rest of ['', 'limit_price=0;', 'stop_price=+0.0;', 'limit_price=0.;'])
      expect(failure(`${CHANGE} ${rest}`)).toBe('invalid_value: CHANGE needs qty, limit_price or stop_price to change');
  });

  test('each field alone is a change, and the strategy it belongs to is carried', () => {
    expect(command(`${CHANGE} stop_price=4400;`).order).toEqual({ orderId: 'o-1', stopPrice: { kind: 'absolute', value: 4400, text: '4400' } });
    const limit = command(`${CHANGE} limit_price=4410; stop_price=0;`).order;
    expect(Object.keys(limit).sort()).toEqual(['limitPrice', 'orderId']);
    expect(command(`${CHANGE} qty=3; strategy_id=s-9;`).order).toEqual({ orderId: 'o-1', quantity: 3, strategyId: 's-9' });
  });
});

describe('§3.3 CLOSEPOSITION', () => {
  const CLOSE = 'key=k; command=CLOSEPOSITION; account=Sim101; instrument=ES 06-26;';
  test('qty is quantity; both given, quantity wins with a warning', () => {
    expect(command(`${CLOSE} qty=2;`)).toMatchObject({ closeQuantity: 2, warnings: [] });
    const both = command(`${CLOSE} qty=2; quantity=3;`);
    expect(both.closeQuantity).toBe(3);
    expect(both.warnings).toEqual(['qty and quantity given; quantity was used']);
    expect(command(`${CLOSE} quantity=3;`).warnings).toEqual([]);
    expect(command(CLOSE)).not.toHaveProperty('closeQuantity');
  });

  test('percent: a fraction above 0, at most 1', () => {
    expect(command(`${CLOSE} percent=0.25;`).percent).toBe(0.25);
    expect(command(`${CLOSE} percent=1;`).percent).toBe(1);
    expect(failure(`${CLOSE} percent=0;`)).toBe('invalid_value: percent: must be greater than 0');
    expect(failure(`${CLOSE} percent=1.5;`)).toBe('invalid_value: percent: 1.5 is more than 1 as a fraction (0.25 = 25 %)');
    expect(failure(`${CLOSE} percent=half;`)).toBe("invalid_value: percent: 'half' is not a number of as a fraction (0.25 = 25 %)");
    expect(command(`${CLOSE} qty=1; percent=0.5;`)).not.toHaveProperty('percent');
  });
});

describe('§4.3 require_market_position, §4.4 max_positions', () => {
  test('sides in any case, trimmed, each once', () => {
    expect(options(`${BUY} require_market_position=flat, Long;`).requireMarketPosition).toEqual(['flat', 'long']);
    expect(options(`${BUY} require_market_position=short/short;`).requireMarketPosition).toEqual(['short']);
    expect(failure(`${BUY} require_market_position=flat,up;`)).toBe("invalid_value: require_market_position: 'flat,up' is not a list of flat, long, short");
  });

  test('only on the commands that read a position, and only with an instrument', () => {
    expect(failure('key=k; command=CANCEL; order_id=o-1; require_market_position=flat;')).toBe('invalid_value: require_market_position is not available on CANCEL');
    expect(failure('key=k; command=CANCELORDERS; account=Sim101; require_market_position=flat;')).toBe(
      'invalid_value: require_market_position needs instrument (the position it reads)',
    );
    expect(options('key=k; command=CANCELORDERS; account=Sim101; instrument=ES 06-26; require_market_position=long;').requireMarketPosition).toEqual(['long']);
  });

  test('max_positions, or max_position, from 1, on the placing commands only', () => {
    expect(options(`${BUY} max_position=2;`).maxPositions).toBe(2);
    expect(options(`${BUY} max_positions=1;`).maxPositions).toBe(1);
    expect(failure(`${BUY} max_position=0;`)).toBe("invalid_value: max_position: '0' is not a whole number from 1 to 100000");
    expect(failure(`${BUY} max_positions=0;`)).toBe("invalid_value: max_positions: '0' is not a whole number from 1 to 100000");
    expect(failure('key=k; command=CLOSEPOSITION; account=Sim101; instrument=ES 06-26; max_positions=1;')).toBe(
      'invalid_value: max_positions is not available on CLOSEPOSITION',
    );
  });
});

describe('§4.5 brackets', () => {
  test('on PLACE and FLATPLACE; elsewhere refused by name', () => {
    expect(Object.keys(options(`${BUY} take_profit=10 ticks; stop_loss=8 ticks;`).bracket!)).toEqual(['takeProfit', 'stopLoss']);
    expect(failure('key=k; command=CLOSEPOSITION; account=Sim101; instrument=ES 06-26; take_profit=10 ticks;')).toBe(
      'invalid_value: take_profit is not available on CLOSEPOSITION',
    );
    expect(failure(`${BUY} stop_loss=8 ticks; stop_loss_limit=9 ticks;`)).toBe(
      'invalid_value: stop_loss and stop_loss_limit: give one (a stop-market or a stop-limit stop-loss)',
    );
  });

  test('stop_loss_stop without stop_loss_limit is dropped with a warning', () => {
    const alert = command(`${BUY} take_profit=10 ticks; stop_loss_stop=7 ticks;`);
    expect(Object.keys(alert.options.bracket!)).toEqual(['takeProfit']);
    expect(alert.warnings).toEqual(['stop_loss_stop is used only with stop_loss_limit; it was ignored']);
    const kept = command(`${BUY} stop_loss_limit=9 ticks; stop_loss_stop=7 ticks;`);
    expect(Object.keys(kept.options.bracket!)).toEqual(['stopLossLimit', 'stopLossStop']);
    expect(kept.warnings).toEqual([]);
  });

  test('CANCELANDBRACKET needs a take-profit or a stop-loss, and has no stop-limit', () => {
    const CAB = 'key=k; command=CANCELANDBRACKET; account=Sim101; instrument=ES 06-26; action=BUY; qty=1;';
    expect(failure(CAB)).toBe('missing_field: Check message format, missing required field: TAKE_PROFIT');
    expect(Object.keys(options(`${CAB} stop_loss=8 ticks;`).bracket!)).toEqual(['stopLoss']);
    expect(Object.keys(options(`${CAB} take_profit=8 ticks;`).bracket!)).toEqual(['takeProfit']);
    expect(failure(`${CAB} stop_loss_limit=8 ticks;`)).toBe(
      'invalid_value: stop_loss_limit is not available on CANCELANDBRACKET (its stop-loss is a stop-market order); use stop_loss',
    );
  });

  test('append_atm=true is refused; false is nothing', () => {
    expect(failure(`${BUY} append_atm=true;`)).toBe(
      'invalid_value: append_atm is not served by this server: the service API has no way to add orders to a running ATM strategy',
    );
    expect(options(`${BUY} append_atm=false;`)).toEqual({});
  });
});

describe('§4.7 cancel_after, §4.8 the window, §4.9 bypass', () => {
  test('cancel_after: minutes 1 to 60, on LIMIT entries of PLACE and FLATPLACE', () => {
    expect(options(`${LIMIT} cancel_after=1;`).cancelAfterMinutes).toBe(1);
    expect(options(`${LIMIT} cancel_after=60;`).cancelAfterMinutes).toBe(60);
    expect(failure(`${LIMIT} cancel_after=0.5;`)).toBe('invalid_value: cancel_after: 0.5 is less than 1 minutes');
    expect(failure(`${LIMIT} cancel_after=61;`)).toBe('invalid_value: cancel_after: 61 is more than 60 minutes');
    expect(failure(`${BUY} cancel_after=5;`)).toBe('invalid_value: cancel_after applies to LIMIT orders of PLACE and FLATPLACE only');
  });

  test('start and end times, and closing-only after a time inside them', () => {
    expect(options(`${BUY} end_time=15:00;`).window).toEqual({ end: 900 });
    expect(options(`${BUY} start_time=9:30 AM; end_time=15:00; closing_only_after=14:30;`).window).toEqual({ start: 570, end: 900, closingOnlyAfter: 870 });
    for (const times of ['closing_only_after=14:30;', 'start_time=9:30; closing_only_after=14:30;', 'end_time=15:00; closing_only_after=14:30;'])
      expect(failure(`${BUY} ${times}`)).toBe('invalid_value: closing_only_after needs both start_time and end_time');
  });

  test('bypass_trade_windows: true bypasses, anything else does not', () => {
    expect(options(`${BUY} bypass_trade_windows=TRUE;`).bypassTradeWindows).toBe(true);
    expect(options(`${BUY} bypass_trade_windows=yes;`)).toEqual({});
  });
});

describe('§4.11 rate_limit', () => {
  test.each([
    ['3', { count: 3, seconds: 60 }],
    ['3/10', { count: 3, seconds: 10 }],
    [' +3 / +10 ', { count: 3, seconds: 10 }],
    ['1000/86400', { count: 1000, seconds: 86_400 }],
    ['1/1', { count: 1, seconds: 1 }],
  ])('rate_limit=%j is %j', (text, limit) => {
    expect(options(`${BUY} rate_limit=${text}; id=entries;`).rateLimit).toEqual({ id: 'entries', ...limit });
  });

  test.each(['0', '1001', '5/0', '5/86401', '5/', 'x', '5 5', '5/s'])('rate_limit=%j is refused', (text) => {
    expect(failure(`${BUY} rate_limit=${text}; id=entries;`)).toBe(
      `invalid_value: rate_limit: '${text.trim()}' is not N or N/SECONDS with N from 1 to 1000 and SECONDS from 1 to 86400`,
    );
  });

  test('needs an id', () => {
    expect(failure(`${BUY} rate_limit=3;`)).toBe('invalid_value: rate_limit needs id (the alerts it counts together)');
  });
});

describe('§4.15 sync_strategy', () => {
  const SYNC = `${BUY} sync_strategy=true; market_position=long; prev_market_position=flat;`;
  test('the sides, out_of_sync (block unless given) and the size of a signed target', () => {
    expect(options(SYNC).sync).toEqual({ marketPosition: 'long', prevMarketPosition: 'flat', outOfSync: 'block' });
    expect(options(`${SYNC} out_of_sync=Flatten; target_quantity=-3;`).sync).toEqual({ marketPosition: 'long', prevMarketPosition: 'flat', outOfSync: 'flatten', targetQuantity: 3 });
    expect(failure(`${SYNC} out_of_sync=wait;`)).toBe("invalid_value: out_of_sync: 'wait' is not one of BLOCK, FLATTEN, RESYNC");
  });

  test('on PLACE only, with both positions', () => {
    expect(failure(SYNC.replace('command=PLACE', 'command=FLATPLACE'))).toBe('invalid_value: sync_strategy is available on PLACE only');
    expect(failure(`${BUY} sync_strategy=true; prev_market_position=flat;`)).toBe('missing_field: Check message format, missing required field: MARKET_POSITION');
    expect(failure(`${BUY} sync_strategy=true; market_position=long;`)).toBe('missing_field: Check message format, missing required field: PREV_MARKET_POSITION');
    expect(options(`${BUY} sync_strategy=false; market_position=long;`)).toEqual({});
  });
});

describe('§4.1 accounts', () => {
  const accounts = (n: number) => Array.from({ length: n }, (_, i) => `Sim${i + 1}`).join(',');
  test('up to 20, each once in any case', () => {
    expect(command(BUY.replace('account=Sim101', `account=${accounts(20)}`)).accounts).toHaveLength(20);
    expect(failure(BUY.replace('account=Sim101', `account=${accounts(21)}`))).toBe('invalid_value: account: 21 accounts; at most 20 in one message');
    expect(failure(BUY.replace('account=Sim101', 'account=Sim1, sim1'))).toBe("invalid_value: account: 'sim1' is listed twice");
    expect(failure(BUY.replace('account=Sim101', 'account=Sim1,,Sim2'))).toBe("invalid_value: account: 'Sim1,,Sim2' has an empty account name");
  });
});
