/**
 * The alert language's rules (webhook-reference.md §2, §3, §4): fields and separators, case,
 * comments, placeholders, repeats, unknown fields, values; and, by property, that any message
 * built from valid fields in any order, spacing and case parses to the same calls.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { AlertFailure, type Alert, parseAlert } from '../../src/alerts/message.js';
import { mainCall, shownArgs } from '../../src/alerts/plan.js';
import { AlertFormatError, asciiLower, commandWord, keysIn, readFields, redactKey } from '../../src/alerts/syntax.js';

const NOW = new Date('2026-05-01T15:00:00Z');
const parse = (text: string) => parseAlert(text, { now: NOW });
const BUY = 'key=k; command=PLACE; account=Sim101; instrument=ES 06-26; action=BUY; qty=1; order_type=MARKET; tif=DAY;';

function failure(text: string): string {
  try {
    parse(text);
  } catch (error) {
    if (error instanceof AlertFailure || error instanceof AlertFormatError) return `${error.code}: ${error.detail}`;
    throw error;
  }
  return 'parsed';
}

const callsOf = (alert: Alert) => {
  if (alert.kind !== 'command') return [{ killSwitch: alert.on }];
  return (alert.accounts.length ? alert.accounts : [undefined]).map((account) => {
    const call = mainCall(alert, account);
    return { operation: call.operation, args: shownArgs(call), options: alert.options };
  });
};

describe('§2.1 fields and separators', () => {
  test('spaces, tabs, CR LF and blank lines between fields are free; the last ; may be missing', () => {
    const spaced = ' key = k ;\r\n\r\n command =PLACE;\taccount= Sim101 ;instrument=ES 06-26;action=BUY;qty=1;order_type=MARKET;tif=DAY';
    expect(callsOf(parse(spaced))).toEqual(callsOf(parse(BUY)));
  });

  test('a value keeps its inner spaces, not the surrounding ones', () => {
    expect(readFields('instrument=  ES 03-25 ; limit_price=-10 ticks;').values).toEqual({ instrument: 'ES 03-25', limit_price: '-10 ticks' });
  });

  test('the value runs from the first = on', () => {
    expect(readFields('notes=a=b=c;').values).toEqual({ notes: 'a=b=c' });
  });

  test('an empty value is as if the field were absent', () => {
    expect(readFields('limit_price=; qty=1;').values).toEqual({ qty: '1' });
    expect(failure(BUY.replace('qty=1;', 'qty=;'))).toBe('missing_field: Check message format, missing required field: QTY');
  });

  test('a piece with no = is a format error naming it', () => {
    expect(failure(`${BUY} hello;`)).toBe("invalid_format: field 'hello' has no '='");
    expect(failure(`${BUY} =x;`)).toBe("invalid_format: field '=x' has no name before its '='");
  });

  test("a line break inside a value is a missing ';'", () => {
    expect(failure('key=k;\ncommand=CANCEL\norder_id=abc;')).toBe("invalid_format: missing ';' after 'command=CANCEL'");
    expect(failure('key=k;\ncommand=CANCEL;\nhello\norder_id=abc;')).toBe("invalid_format: missing ';' after 'hello'");
  });

  test('JSON is refused (§1.1)', () => {
    expect(failure('{"key": "k", "command": "PLACE"}')).toBe('invalid_format: the webhook takes key=value; text, not JSON');
    expect(failure(' [1, 2]')).toBe('invalid_format: the webhook takes key=value; text, not JSON');
    // Text that only starts like JSON is read as text.
    expect(failure('{not json;')).toBe("invalid_format: field '{not json' has no '='");
  });

  test('a leading BOM is dropped', () => {
    expect(callsOf(parse(`\ufeff${BUY}`))).toEqual(callsOf(parse(BUY)));
  });
});

describe('§2.2 names and case', () => {
  test('names and enumerated values in any case; order_type and command ignoring _ - and spaces', () => {
    const shouted = 'KEY=k; Command=place; ACCOUNT=Sim101; Instrument=ES 06-26; ACTION=buy; QTY=1; Order_Type=stop_market; STOP_PRICE=6010; TIF=gtc;';
    expect(callsOf(parse(shouted))).toEqual([
      {
        operation: 'PlaceOrder',
        args: { account: 'Sim101', instrument: 'ES 06-26', action: 'BUY', quantity: 1, orderType: 'STOPMARKET', timeInForce: 'GTC', stopPrice: 6010 },
        options: {},
      },
    ]);
    expect(callsOf(parse(BUY.replace('PLACE', 'flat-place')))[0]).toMatchObject({ operation: 'FlatPlace' });
  });

  test('free strings keep their case', () => {
    const alert = parse(`${BUY} order_id=MyOrder-1; strategy_tag=ORB; notes=Hello World;`);
    expect(alert.kind === 'command' && [alert.order.orderId, alert.options.strategyTag, alert.options.notes]).toEqual(['MyOrder-1', 'ORB', 'Hello World']);
    expect(alert.key).toBe('k');
  });
});

describe('§2.3 order, repeats, unknown fields', () => {
  test('a repeated field: the last wins, with a warning', () => {
    const alert = parse(`${BUY} qty=3;`);
    expect(alert.kind === 'command' && alert.order.quantity).toBe(3);
    expect(alert.warnings).toEqual(["field 'qty' given twice; the last value was used"]);
  });

  test('the same command twice is a repeat; two different commands are a format error', () => {
    expect(parse(`${BUY} command=place;`).warnings).toEqual(["field 'command' given twice; the last value was used"]);
    expect(failure(`${BUY} command=FLATPLACE;`)).toBe('invalid_format: more than one command');
  });

  test('unknown fields are ignored and listed', () => {
    const alert = parse(`${BUY} open=6000.25; timeframe=5; price=1;`);
    expect(alert.ignoredFields).toEqual(['open', 'timeframe', 'price']);
    expect(callsOf(alert)).toEqual(callsOf(parse(BUY)));
  });

  test('a kill switch with a command is a format error (§3.14)', () => {
    expect(failure(`${BUY} kill_switch=on;`)).toBe('invalid_format: kill_switch is a message of its own; send it without a command');
  });
});

describe('§2.5 comments', () => {
  test('a // line, a //-piece and a // after a field are ignored; # is not a comment', () => {
    const text = `// buy the breakout\n${BUY.replace('qty=1;', 'qty=1; // one contract\n')}\n  // done`;
    expect(callsOf(parse(text))).toEqual(callsOf(parse(BUY)));
    expect(failure(`# note\n${BUY}`)).toBe("invalid_format: missing ';' after '# note'");
  });

  test('a // inside a value stays', () => {
    expect(readFields('notes=see http://example.com/x;').values.notes).toBe('see http://example.com/x');
  });
});

describe('§2.4, §2.6 values', () => {
  test.each([
    ['qty=2.0', 2],
    ['qty=+3', 3],
  ])('%s is a whole number', (field, qty) => {
    const alert = parse(BUY.replace('qty=1', field));
    expect(alert.kind === 'command' && alert.order.quantity).toBe(qty);
  });

  test.each([
    ['qty=1.5', "invalid_value: qty: '1.5' is not a whole number from 1 to 100000"],
    ['qty=0', "invalid_value: qty: '0' is not a whole number from 1 to 100000"],
    ['qty={{strategy.order.contracts}}', "invalid_value: unexpanded TradingView placeholder in 'qty'"],
    ['action=HOLD', "invalid_value: action: 'HOLD' is not one of BUY, SELL"],
    ['tif=IOC', "invalid_value: tif: 'IOC' is not one of DAY, GTC"],
    ['order_type=STOP', "invalid_value: order_type: 'STOP' is not one of MARKET, LIMIT, STOPMARKET, STOPLIMIT"],
    ['order_type=trailingstop', "invalid_value: order_type 'trailingstop' is only available with destination=tradovate"],
    ['instrument=RTYH2026', 'invalid_value: instrument: unknown root'],
  ])('%s', (field, message) => {
    const [name] = field.split('=');
    expect(failure(BUY.replace(new RegExp(`${name}=[^;]*`), field))).toContain(message);
  });

  test('missing fields are named as the docs word them, in the order of §3.0', () => {
    expect(failure('key=k; account=Sim101;')).toBe('missing_field: Check message format, missing required field: COMMAND');
    expect(failure('key=k; command=PLACE; account=Sim101; instrument=ES 06-26; action=BUY;')).toBe(
      'missing_field: Check message format, missing required field: QTY',
    );
    expect(failure(BUY.replace('MARKET', 'LIMIT'))).toBe('missing_field: Check message format, missing required field: LIMIT_PRICE');
    expect(failure('key=k; command=PLACEE;')).toBe("unknown_command: Unknown command 'PLACEE'");
  });

  test('a price the order type does not use is ignored with a warning (§3.1)', () => {
    const alert = parse(`${BUY} limit_price=6000;`);
    expect(alert.warnings).toEqual(['limit_price is not used by MARKET orders; it was ignored']);
    expect(callsOf(alert)).toEqual(callsOf(parse(BUY)));
  });

  test.each([
    ['flatten_first=yes', "invalid_value: flatten_first: 'yes' is not true or false"],
    ['require_market_position=up', "invalid_value: require_market_position: 'up' is not a list of flat, long, short"],
    ['max_positions=0', "invalid_value: max_positions: '0' is not a whole number from 1 to 100000"],
    ['delay=75', 'invalid_value: delay: 75 is more than 60 seconds'],
    ['rate_limit=3', 'invalid_value: rate_limit needs id (the alerts it counts together)'],
    ['rate_limit=1001/60; id=x', "invalid_value: rate_limit: '1001/60' is not N or N/SECONDS with N from 1 to 1000 and SECONDS from 1 to 86400"],
    ['cancel_after=5', 'invalid_value: cancel_after applies to LIMIT orders of PLACE and FLATPLACE only'],
    ['start_time=25:00', "invalid_value: start_time: must be a time of day like 9:30 AM or 13:30 (US/Eastern), got '25:00'"],
    ['closing_only_after=15:45', 'invalid_value: closing_only_after needs both start_time and end_time'],
    ['take_profit=6010; stop_loss=5990; stop_loss_limit=5990', 'invalid_value: stop_loss and stop_loss_limit: give one'],
    ['strategy=ATM1; strategy_id=123', 'invalid_value: strategy and strategy_id: give one'],
    ['trail_offset=4', 'invalid_value: trail_offset is only available with destination=tradovate'],
    ['destination=cme', "invalid_value: destination: 'cme' is not one of nt8, tradovate"],
    ['append_atm=true', 'invalid_value: append_atm is not served by this server'],
    [`notes=${'x'.repeat(501)}`, 'invalid_value: notes: 501 characters; at most 500'],
  ])('%s', (field, message) => {
    expect(failure(`${BUY} ${field};`)).toContain(message);
  });

  test('bypass_trade_windows: anything but true is false (§4.9)', () => {
    const alert = parse(`${BUY} bypass_trade_windows=yes;`);
    expect(alert.kind === 'command' && alert.options.bypassTradeWindows).toBeUndefined();
  });

  test.each([
    ['account=Sim101,,Sim102', "invalid_value: account: 'Sim101,,Sim102' has an empty account name"],
    ['account=Sim101,sim101', "invalid_value: account: 'sim101' is listed twice"],
    [`account=${Array.from({ length: 21 }, (_, i) => `A${i}`).join(',')}`, 'invalid_value: account: 21 accounts; at most 20 in one message'],
  ])('multi-account list: %s', (field, message) => {
    expect(failure(BUY.replace('account=Sim101', field))).toBe(message);
  });

  test('options that do not apply to the command are refused', () => {
    expect(failure('key=k; command=CLOSEPOSITION; account=Sim101; instrument=ES 06-26; take_profit=5%;')).toBe(
      'invalid_value: take_profit is not available on CLOSEPOSITION',
    );
    expect(failure('key=k; command=FLATTEN; account=Sim101; require_market_position=long;')).toBe(
      'invalid_value: require_market_position needs instrument (the position it reads)',
    );
    expect(failure('key=k; command=REVERSE; account=Sim101; instrument=ES 06-26; max_positions=2;')).toBe(
      'invalid_value: max_positions is not available on REVERSE',
    );
  });

  test('sync_strategy reads its fields; target_quantity may be signed', () => {
    const alert = parse(`${BUY} sync_strategy=true; market_position=long; prev_market_position=FLAT; target_quantity=-2; out_of_sync=Resync;`);
    expect(alert.kind === 'command' && alert.options.sync).toEqual({ marketPosition: 'long', prevMarketPosition: 'flat', targetQuantity: 2, outOfSync: 'resync' });
    expect(failure(`${BUY} sync_strategy=true; market_position=long;`)).toBe(
      'missing_field: Check message format, missing required field: PREV_MARKET_POSITION',
    );
  });

  test('max_position is an alias of max_positions; atm_strategy of strategy', () => {
    const alert = parse(`${BUY} max_position=3; atm_strategy=ATM 2R;`);
    expect(alert.kind === 'command' && [alert.options.maxPositions, alert.order.strategy]).toEqual([3, 'ATM 2R']);
  });
});

describe('redactKey', () => {
  test('the key value, wherever the field stands and however it is cased, becomes ***', () => {
    expect(redactKey('key=s3cret; command=PLACE;\n KEY = other ;')).toBe('key=***; command=PLACE;\n KEY =***;');
    expect(redactKey('\ufeffkey=abc;')).toBe('\ufeffkey=***;');
    expect(redactKey('monkey=abc; key=;')).toBe('monkey=abc; key=;');
  });
});

/** A field as a sender might write it: its name in any case, spaces around, its value in the case allowed. */
const caseOf = (text: string) =>
  fc.array(fc.boolean(), { minLength: text.length, maxLength: text.length }).map((upper) => [...text].map((c, i) => (upper[i] ? c.toUpperCase() : c.toLowerCase())).join(''));
const space = fc.constantFrom('', ' ', '  ', '\t');
const separator = fc.constantFrom(';', '; ', ';\n', ';\r\n', ' ;\n\n', ';\t');

describe('property: any order, spacing and case', () => {
  test('a message built from valid fields parses to the same calls', () => {
    const field = fc.record({
      command: fc.constantFrom('PLACE', 'FLATPLACE', 'REVERSEPOSITION'),
      accounts: fc.uniqueArray(fc.constantFrom('Sim101', 'Sim102', 'Sim103', 'Live7'), { minLength: 1, maxLength: 3, selector: (a) => a.toLowerCase() }),
      action: fc.constantFrom('BUY', 'SELL'),
      qty: fc.integer({ min: 1, max: 500 }),
      type: fc.constantFrom('MARKET', 'LIMIT', 'STOPMARKET', 'STOPLIMIT'),
      tif: fc.constantFrom('DAY', 'GTC'),
      price: fc.integer({ min: 4000, max: 7000 }),
      delay: fc.option(fc.integer({ min: 1, max: 60 }), { nil: undefined }),
    });
    fc.assert(
      fc.property(
        field.chain((f) => {
          const pairs: Array<[string, string]> = [
            ['key', 'k'],
            ['command', f.command],
            ['account', f.accounts.join(',')],
            ['instrument', 'ES 06-26'],
            ['action', f.action],
            ['qty', String(f.qty)],
            ['order_type', f.type],
            ['tif', f.tif],
          ];
          if (f.type === 'LIMIT' || f.type === 'STOPLIMIT') pairs.push(['limit_price', String(f.price)]);
          if (f.type === 'STOPMARKET' || f.type === 'STOPLIMIT') pairs.push(['stop_price', `${f.price / 4} ticks`]);
          if (f.delay !== undefined) pairs.push(['delay', String(f.delay)]);
          // Enumerated values may come in any case; free strings (key, accounts) as written.
          const casedValue = (n: string, v: string) => (['command', 'action', 'order_type', 'tif'].includes(n) ? caseOf(v) : fc.constant(v));
          return fc.tuple(
            fc.constant(pairs),
            fc.shuffledSubarray(pairs, { minLength: pairs.length, maxLength: pairs.length }),
            fc.tuple(...pairs.map(([n, v]) => fc.tuple(caseOf(n), casedValue(n, v), space, space, separator))),
            fc.boolean(),
          );
        }),
        ([pairs, shuffled, styles, lastSemicolon]) => {
          const canonical = parse(pairs.map(([n, v]) => `${n}=${v};`).join(''));
          const styleOf = new Map(pairs.map(([n], i) => [n, styles[i]!]));
          const text = shuffled
            .map(([n], i) => {
              const [name, value, before, after, sep] = styleOf.get(n)!;
              const last = i === shuffled.length - 1;
              return `${before}${name}${after}=${before}${value}${after}${last && !lastSemicolon ? '' : sep}`;
            })
            .join('');
          expect(callsOf(parse(text))).toEqual(callsOf(canonical));
        },
      ),
      { numRuns: 300 },
    );
  });

  test('any text either parses, or fails with a typed error (never anything else)', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', 'k', 'e', 'y', '=', ';', ' ', '\n', '/', '{', '}', '"', 'q', 't', '1', 'P', 'L', 'A', 'C', 'E') }), (text) => {
        try {
          parse(text);
        } catch (error) {
          expect(error instanceof AlertFailure || error instanceof AlertFormatError).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe("each command's required fields, as the reference's §3.0 lists them", () => {
  const REFERENCE = readFileSync(new URL('../../docs/webhook-reference.md', import.meta.url), 'utf8');
  const INDEX = REFERENCE.slice(REFERENCE.indexOf('### 3.0 Index'), REFERENCE.indexOf('Rules for all commands:'));
  /** The `req` column of each command's row: the names before any `;` or `, and` (what a type or a bracket needs besides). */
  const rows = [...INDEX.matchAll(/^\| `([A-Z]+)` \| [^|]* \| ([^|]*) \|/gm)].map(([, command, req]) => ({ command: command!, req: req!.trim() }));
  const names = (text: string) => [...text.split(/;|, and /)[0]!.matchAll(/`(\w+)`/g)].map((m) => m[1]!);
  const PLACE = names(rows.find((r) => r.command === 'PLACE')!.req);
  const required = (req: string) => (req === '—' ? [] : req === 'as PLACE' ? PLACE : req.endsWith('+ PLACE fields') ? [...names(req), ...PLACE] : names(req));
  const VALUES: Record<string, string> = { account: 'Sim101', instrument: 'ES 06-26', action: 'BUY', qty: '1', order_type: 'MARKET', tif: 'DAY', order_id: 'o1', strategy_id: 's1' };
  const message = (command: string, fields: string[]) => `key=k; command=${command}; ${fields.map((f) => `${f}=${VALUES[f]};`).join(' ')}`;

  test('the index names the 14 commands', () => {
    expect(rows.map((r) => r.command)).toHaveLength(14);
    expect(PLACE).toEqual(['account', 'instrument', 'action', 'qty', 'order_type', 'tif']);
  });

  for (const { command, req } of rows) {
    const fields = required(req);
    test(`${command}: ${fields.join(', ') || 'none'}; each one missing is named`, () => {
      // With every required field there: whatever else it lacks (CANCELANDBRACKET a leg), none of them is missing.
      const whole = failure(message(command, fields));
      for (const field of fields) expect(whole).not.toBe(`missing_field: Check message format, missing required field: ${field.toUpperCase()}`);
      if (command !== 'CANCELANDBRACKET') expect(whole).not.toMatch(/^missing_field/);
      for (const field of fields)
        expect(failure(message(command, fields.filter((f) => f !== field)))).toBe(`missing_field: Check message format, missing required field: ${field.toUpperCase()}`);
    });
  }
});

describe('§2.3, §2.6 the fields the language knows', () => {
  /** Every field docs/webhook-reference.md names: §1.2, §3.0's columns, §4.0's index, §4.4's alias, §4.17. */
  const FIELDS = [
    'key', 'command', 'account', 'instrument', 'action', 'qty', 'quantity', 'percent', 'order_type', 'tif', 'limit_price',
    'stop_price', 'oco_id', 'order_id', 'strategy', 'atm_strategy', 'strategy_id', 'flatten_first', 'require_market_position',
    'max_positions', 'max_position', 'take_profit', 'stop_loss', 'stop_loss_limit', 'stop_loss_stop', 'append_atm', 'cancel_after',
    'start_time', 'end_time', 'closing_only_after', 'bypass_trade_windows', 'delay', 'rate_limit', 'id', 'kill_switch',
    'strategy_tag', 'sync_strategy', 'market_position', 'prev_market_position', 'target_quantity', 'out_of_sync',
    'destination', 'notes', 'trail_offset',
  ];
  const reference = readFileSync(new URL('../../docs/webhook-reference.md', import.meta.url), 'utf8');

  test.each(FIELDS.filter((f) => f !== 'key'))('%s is a field: an unexpanded placeholder in it is refused, naming it', (field) => {
    expect(reference).toContain(`\`${field}\``);
    // The command and the kill switch stand alone; every other field rides on a PLACE.
    const message = field === 'command' || field === 'kill_switch' ? `key=k; ${field}={{strategy.order.contracts}};` : `${BUY} ${field}={{strategy.order.contracts}};`;
    expect(failure(message)).toBe(`invalid_value: unexpanded TradingView placeholder in '${field}'`);
  });

  test('a field the language does not know keeps its placeholder, ignored and listed; the key is never listed', () => {
    const alert = parse(`${BUY} qtty={{strategy.order.contracts}}; Key2=x;`);
    expect(alert.ignoredFields).toEqual(['qtty', 'key2']);
    expect(parse(`${BUY} notes=entry; strategy_tag=t1;`).ignoredFields).toEqual([]);
  });
});

describe('§2.2 words in any case', () => {
  test('a command word: ASCII letters upper-cased, spaces, tabs, _ and - dropped, anything else kept', () => {
    expect(commandWord('cancel_and-bracket')).toBe('CANCELANDBRACKET');
    expect(commandWord('Close Position')).toBe('CLOSEPOSITION');
    expect(commandWord('flatten\teverything')).toBe('FLATTENEVERYTHING');
    expect(commandWord('pLaCe')).toBe('PLACE');
    expect(commandWord('PLACE')).toBe('PLACE');
    expect(commandWord('placé.2')).toBe('PLACé.2');
    expect(commandWord('ſell')).toBe('ſELL');
  });

  test('asciiLower lowers ASCII letters only', () => {
    expect(asciiLower('TRUE False')).toBe('true false');
    expect(asciiLower('ÉTÉ')).toBe('ÉtÉ');
    expect(asciiLower('KILL_SWITCH=ON')).toBe('kill_switch=on');
  });

  test('keysIn finds every key field, at the start, after a ; or a line break, in any case, not inside another name', () => {
    expect(keysIn('key=a; command=PLACE;\nKEY = b ;\r\nmonkey=c; key=; \ufeffkey=d')).toEqual(['a', 'b', 'd']);
    expect(keysIn('command=PLACE')).toEqual([]);
  });
});
