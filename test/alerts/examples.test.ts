/**
 * webhook-reference.md §7's example messages, quoted exactly: each parses to the calls §3's
 * mapping gives, or fails as the reference says.
 */
import { describe, expect, test } from 'vitest';
import { AlertFailure, type Alert, parseAlert } from '../../src/alerts/message.js';
import { mainCall, optionNotes, shownArgs } from '../../src/alerts/plan.js';
import { AlertFormatError } from '../../src/alerts/syntax.js';

/** 1 May 2026: ES1! is the June 2026 contract. */
const NOW = new Date('2026-05-01T15:00:00Z');
const parse = (text: string) => parseAlert(text, { now: NOW });
const command = (alert: Alert) => {
  if (alert.kind !== 'command') throw new Error('not a command');
  return alert;
};
/** The calls of every clone, as --check shows them. */
const calls = (text: string) => {
  const alert = command(parse(text));
  return (alert.accounts.length ? alert.accounts : [undefined]).map((account) => {
    const call = mainCall(alert, account);
    return { operation: call.operation, args: shownArgs(call) };
  });
};
const failureOf = (text: string) => {
  try {
    parse(text);
  } catch (error) {
    if (error instanceof AlertFailure) return { code: error.code, detail: error.detail };
    if (error instanceof AlertFormatError) return { code: error.code, detail: error.detail };
    throw error;
  }
  throw new Error('parsed');
};

const market = { action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' };

describe('§7 example messages', () => {
  test('1. minimal market buy', () => {
    const text = 'key=your-secret-key;\ncommand=PLACE;\naccount=sim101;\ninstrument=MNQ 06-25;\naction=BUY;\nqty=1;\norder_type=MARKET;\ntif=DAY;\n';
    expect(calls(text)).toEqual([{ operation: 'PlaceOrder', args: { account: 'sim101', instrument: 'MNQ 06-25', ...market } }]);
    expect(parse(text).key).toBe('your-secret-key');
    expect(parse(text).fields).not.toHaveProperty('key');
  });

  test('2. lower case, TradingView continuous symbol', () => {
    const text = 'key=your-secret-key;\ncommand=place;\naccount=Sim101;\ninstrument=ES1!;\naction=buy;\nqty=1;\norder_type=market;\ntif=day;\n';
    expect(calls(text)).toEqual([{ operation: 'PlaceOrder', args: { account: 'Sim101', instrument: 'ES 06-26', ...market } }]);
  });

  test('3. flatten first, one line, upper-case TIF', () => {
    const text =
      'key=your-secret-key; command=PLACE; account=sim101; instrument=ES 03-25; action=BUY; qty=1; order_type=MARKET; TIF=DAY; flatten_first=true;';
    expect(calls(text)).toEqual([{ operation: 'FlatPlace', args: { account: 'sim101', instrument: 'ES 03-25', ...market } }]);
  });

  test('4. FLATPLACE', () => {
    const text = 'key=your-secret-key;\ncommand=flatplace;\naccount=sim101;\ninstrument=ES1!;\naction=buy;\nqty=1;\norder_type=market;\ntif=day;\n';
    expect(calls(text)).toEqual([{ operation: 'FlatPlace', args: { account: 'sim101', instrument: 'ES 06-26', ...market } }]);
  });

  test('5. require long or flat', () => {
    const text =
      'key=your-secret-key;\ncommand=PLACE;\naccount=sim101;\ninstrument=ZW 12-24;\naction=BUY;\nqty=1;\norder_type=MARKET;\ntif=DAY;\nrequire_market_position=long,flat;\n';
    expect(calls(text)).toEqual([
      { operation: 'PlaceOrder', args: { account: 'sim101', instrument: 'ZW 12-24', ...market, requireMarketPosition: 'long,flat' } },
    ]);
  });

  test('6. max positions', () => {
    const text = 'key=your-secret-key;\ncommand=place;\naccount=sim101;\ninstrument=CL 4-26;\naction=buy;\nqty=1;\norder_type=market;\ntif=day;\nmax_positions=2;\n';
    expect(calls(text)).toEqual([{ operation: 'PlaceOrder', args: { account: 'sim101', instrument: 'CL 04-26', ...market, maxPositions: 2 } }]);
  });

  test('7. take profit and stop loss with the docs\' placeholders left as written: invalid_value', () => {
    const text =
      'key=your-secret-key; command=PLACE; account=sim101; instrument=NQ 12-24; action=BUY; qty=1; order_type=MARKET; TIF=DAY; take_profit=(price above); stop_loss=(price below);';
    expect(failureOf(text)).toEqual({
      code: 'invalid_value',
      detail: "take_profit: must be a price like 4500.25, or a distance like 5%, -25 ticks, 15 points, 250 dollars, got '(price above)'",
    });
    // With prices written in, the bracket rides on the PlaceOrder.
    const alert = command(parse(text.replace('(price above)', '21100').replace('(price below)', '20900')));
    expect(alert.options.bracket).toEqual({ takeProfit: { kind: 'absolute', value: 21100, text: '21100' }, stopLoss: { kind: 'absolute', value: 20900, text: '20900' } });
  });

  test('8. relative price values', () => {
    const text = 'key=k; command=PLACE; account=sim101; instrument=ES 06-26; action=BUY; qty=1; order_type=STOPLIMIT; tif=DAY;\n' +
      'take_profit=5%;\nstop_loss=-25 ticks;\nlimit_price=-2.5%;\nstop_price=12 ticks;\n';
    const alert = command(parse(text));
    expect(alert.order.limitPrice).toEqual({ kind: 'relative', amount: -2.5, unit: 'percent', text: '-2.5%' });
    expect(alert.order.stopPrice).toEqual({ kind: 'relative', amount: 12, unit: 'ticks', text: '12 ticks' });
    expect(alert.options.bracket?.takeProfit).toEqual({ kind: 'relative', amount: 5, unit: 'percent', text: '5%' });
    expect(alert.options.bracket?.stopLoss).toEqual({ kind: 'relative', amount: -25, unit: 'ticks', text: '-25 ticks' });
  });

  test('9. limit entry, relative price, 5-minute timeout, fields out of order', () => {
    const text =
      'key=your-secret-key; account=Sim101; instrument=ES 03-25; command=PLACE; order_type=LIMIT; limit_price=-10 ticks; action=BUY; qty=1; tif=DAY; cancel_after=5;';
    expect(calls(text)).toEqual([
      { operation: 'PlaceOrder', args: { account: 'Sim101', instrument: 'ES 03-25', action: 'BUY', quantity: 1, orderType: 'LIMIT', timeInForce: 'DAY', limitPrice: '-10 ticks' } },
    ]);
    expect(command(parse(text)).options.cancelAfterMinutes).toBe(5);
  });

  test('10. trading window', () => {
    const text =
      'key=your-secret-key; command=PLACE; account=sim101; instrument=NQ 12-24; action=BUY; qty=1; order_type=MARKET; TIF=DAY; start_time=9:30 AM; end_time=4:00 PM;';
    expect(command(parse(text)).options.window).toEqual({ start: 570, end: 960 });
    expect(optionNotes(command(parse(text)))).toEqual(['trading window: from 09:30 until 16:00 ET']);
  });

  test('11. bypass trade windows', () => {
    const text =
      'key=your-secret-key; account=Sim101; instrument=ES 03-25; command=PLACE; order_type=MARKET; action=BUY; qty=1; tif=DAY; bypass_trade_windows=true;';
    expect(command(parse(text)).options.bypassTradeWindows).toBe(true);
  });

  test('12. delay 3 s', () => {
    const text =
      'key=your-secret-key; command=PLACE; account=sim101; instrument=NQ 12-24; action=BUY; qty=1; order_type=MARKET; TIF=DAY; delay=3;';
    expect(command(parse(text)).options.delaySeconds).toBe(3);
  });

  test('13. self rate limit', () => {
    const text =
      'key=your-secret-key; command=PLACE; account=sim101; instrument=NQ 12-24; action=BUY; qty=1; order_type=MARKET; TIF=DAY; rate_limit=1; id=mystrategy;';
    expect(command(parse(text)).options.rateLimit).toEqual({ id: 'mystrategy', count: 1, seconds: 60 });
  });

  test('14. kill switch on and off', () => {
    expect(parse('key=your-secret-key; kill_switch=on;')).toMatchObject({ kind: 'kill_switch', on: true });
    expect(parse('key=your-secret-key; kill_switch=off;')).toMatchObject({ kind: 'kill_switch', on: false });
  });

  test('15. close half the position', () => {
    const text = 'key=your-secret-key;\ncommand=closeposition;\naccount=sim101;\ninstrument=ES 06-26;\npercent=0.5;\n';
    expect(calls(text)).toEqual([{ operation: 'ClosePosition', args: { account: 'sim101', instrument: 'ES 06-26', percent: 0.5 } }]);
  });

  test('16. reverse', () => {
    const text = 'key=your-secret-key;\ncommand=reverse;\naccount=sim101;\ninstrument=ES 06-26;\n';
    expect(calls(text)).toEqual([{ operation: 'Reverse', args: { account: 'sim101', instrument: 'ES 06-26' } }]);
  });

  test('17. reverse position', () => {
    const text =
      'key=your-secret-key;\ncommand=REVERSEPOSITION;\naccount=sim101;\ninstrument=NQ 12-24;\naction=SELL;\nqty=1;\norder_type=MARKET;\ntif=DAY;\n';
    expect(calls(text)).toEqual([{ operation: 'ReversePosition', args: { account: 'sim101', instrument: 'NQ 12-24', ...market, action: 'SELL' } }]);
  });

  test('18. flatten the short positions of one account', () => {
    const text = 'key=your-secret-key;\ncommand=flatten;\naccount=sim101;\nmarket_position=short;\n';
    expect(calls(text)).toEqual([{ operation: 'FlattenEverything', args: { account: 'sim101', marketPosition: 'short' } }]);
  });

  describe('19. cancel, change, cancel-replace, close strategy', () => {
    const cancel = 'key=your-secret-key;\ncommand=cancel;\norder_id=your-order-ID;\nstrategy_id=your-strategy-id; (optional)\n';
    const change =
      'key=your-secret-key;\ncommand=change;\nqty=1; (optional)\nlimit_price=XXX; (optional)\nstop_price=XXX; (optional)\norder_id=your-order-id;\nstrategy_id=your-strategy-id; (optional)\n';
    const unannotated = (text: string) => text.replace(/ \(optional\)/g, '');

    test('the (optional) annotations are not part of a real message: as written, a format error', () => {
      expect(failureOf(cancel)).toEqual({ code: 'invalid_format', detail: "field '(optional)' has no '='" });
      expect(failureOf(change)).toEqual({ code: 'invalid_format', detail: "missing ';' after '(optional)'" });
    });

    test('CANCEL: no account, so the order is looked up in every account', () => {
      expect(calls(unannotated(cancel))).toEqual([{ operation: 'Cancel', args: { orderId: 'your-order-ID' } }]);
      expect(command(parse(unannotated(cancel))).order.strategyId).toBe('your-strategy-id');
    });

    test('CHANGE with XXX prices: invalid_value; with prices, Change', () => {
      expect(failureOf(unannotated(change))).toEqual({
        code: 'invalid_value',
        detail: "limit_price: must be a price like 4500.25, or a distance like 5%, -25 ticks, 15 points, 250 dollars, got 'XXX'",
      });
      const priced = unannotated(change).replace('limit_price=XXX', 'limit_price=6010.25').replace('stop_price=XXX', 'stop_price=0');
      expect(calls(priced)).toEqual([{ operation: 'Change', args: { orderId: 'your-order-id', quantity: 1, limitPrice: 6010.25 } }]);
    });

    test('CANCELREPLACE', () => {
      const text =
        'key=your-secret-key;\ncommand=cancelreplace;\naccount=sim101;\ninstrument=ES 09-26;\naction=buy;\nqty=1;\norder_type=market;\ntif=day;\norder_id=abc123;\n';
      expect(calls(text)).toEqual([{ operation: 'Replace', args: { account: 'sim101', instrument: 'ES 09-26', ...market, orderId: 'abc123' } }]);
    });

    test('CLOSESTRATEGY', () => {
      expect(calls('key=your-secret-key;\ncommand=closestrategy;\nstrategy_id=atm-strategy-id;\n')).toEqual([
        { operation: 'CloseStrategy', args: { strategyId: 'atm-strategy-id' } },
      ]);
    });
  });

  test('20. strategy-sync fields left as placeholders: invalid_value', () => {
    const text =
      'key=k; command=PLACE; account=Sim101; instrument=ES 06-26; action=BUY; qty=1; order_type=MARKET; tif=DAY; sync_strategy=true;\n' +
      'market_position={{strategy.market_position}};\nprev_market_position={{strategy.prev_market_position}};\n';
    expect(failureOf(text)).toEqual({ code: 'invalid_value', detail: "unexpanded TradingView placeholder in 'market_position'" });
  });

  test('21. a whole message built in Pine, sent unexpanded: a format error naming the piece', () => {
    expect(failureOf('key=your-secret-key;\n{{strategy.order.alert_message}}\n')).toEqual({
      code: 'invalid_format',
      detail: "field '{{strategy.order.alert_message}}' has no '='",
    });
  });

  test('22. explicit destination: tradovate is not served', () => {
    const text =
      'key=your-secret-key;\ncommand=place;\naccount=DemoAccount;\ninstrument=ES 06-26;\naction=buy;\nqty=1;\norder_type=market;\ntif=day;\ndestination=tradovate;\n';
    expect(failureOf(text)).toEqual({ code: 'invalid_value', detail: "destination 'tradovate' is not served by this server" });
    expect(calls(text.replace('tradovate', 'NT8'))).toEqual([{ operation: 'PlaceOrder', args: { account: 'DemoAccount', instrument: 'ES 06-26', ...market } }]);
  });
});

describe('§3.0 command → REST mapping', () => {
  const base = 'key=k; account=Sim101; instrument=ES 06-26;';
  test.each([
    ['FLATTENEVERYTHING', 'key=k; command=FLATTENEVERYTHING;', [{ operation: 'FlattenEverything', args: {} }]],
    ['FLATTEN with no filter', 'key=k; command=FLATTEN;', [{ operation: 'FlattenEverything', args: {} }]],
    ['FLATTEN with an account', 'key=k; command=FLATTEN; account=Sim101;', [{ operation: 'Flatten', args: { account: 'Sim101' } }]],
    ['FLATTEN with account and instrument = CLOSEPOSITION', `${base} command=FLATTEN;`, [{ operation: 'ClosePosition', args: { account: 'Sim101', instrument: 'ES 06-26' } }]],
    ['FLATTEN by instrument everywhere', 'key=k; command=FLATTEN; instrument=ES 06-26;', [{ operation: 'FlattenEverything', args: { instrument: 'ES 06-26' } }]],
    ['CANCELORDERS', `${base} command=CANCELORDERS;`, [{ operation: 'CancelOrders', args: { account: 'Sim101', instrument: 'ES 06-26' } }]],
    ['CANCELALLORDERS', 'key=k; command=CANCELALLORDERS;', [{ operation: 'CancelAllOrders', args: {} }]],
    ['CANCEL with an account', 'key=k; command=CANCEL; account=Sim101; order_id=abc;', [{ operation: 'Cancel', args: { account: 'Sim101', orderId: 'abc' } }]],
    [
      'CANCELANDBRACKET',
      `${base} command=CANCELANDBRACKET; action=BUY; qty=2; take_profit=6010; stop_loss=-8 ticks;`,
      [{ operation: 'CancelAndBracket', args: { account: 'Sim101', instrument: 'ES 06-26', action: 'BUY', quantity: 2, takeProfit: 6010, stopLoss: '-8 ticks' } }],
    ],
    ['CLOSEPOSITION, qty as quantity', `${base} command=CLOSEPOSITION; qty=2;`, [{ operation: 'ClosePosition', args: { account: 'Sim101', instrument: 'ES 06-26', quantity: 2 } }]],
    [
      'multi-account: one clone per account',
      'key=k; command=PLACE; account=Sim101, Sim102 ,Sim103; instrument=ES 06-26; action=SELL; qty=2.0; order_type=market; tif=gtc;',
      ['Sim101', 'Sim102', 'Sim103'].map((account) => ({
        operation: 'PlaceOrder',
        args: { account, instrument: 'ES 06-26', action: 'SELL', quantity: 2, orderType: 'MARKET', timeInForce: 'GTC' },
      })),
    ],
  ])('%s', (_name, text, expected) => {
    expect(calls(text)).toEqual(expected);
  });
});

