/**
 * Instrument forms and the roll rule (service-reference.md §9), as pure functions of the text
 * and a date: `ES 03-26`, `CL 4-26`, `ES`, `ES1!`, `ESH26`, `ESH6` and `ES MAR26` all name one
 * dated contract, written `SYMBOL MM-YY`. The dated form needs no date and no table, so the
 * common case costs nothing; the others need the root's listed months and roll family (§10) and
 * the calendar date in America/Chicago.
 */
import { chicagoWallClock } from './chicago.js';
import { CONTRACT_ROOTS, type ContractSpec, contractSpec, type RollFamily } from './contracts.js';

export interface CalendarDate {
  year: number;
  month: number;
  day: number;
}

export type InstrumentForm = 'dated' | 'front' | 'continuous' | 'code' | 'monthName';

export type Resolution =
  | { ok: true; instrument: string; root: string; month: number; year: number; form: InstrumentForm }
  | { ok: false; why: string };

const MONTH_CODES = 'FGHJKMNQUVXZ';
const MONTH_NAMES = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];

/** Upper case for ASCII letters only: `ſ` must not become `S` (String#toUpperCase would). */
const asciiUpper = (text: string) => text.replace(/[a-z]+/g, (letters) => letters.toUpperCase());

/** The input as a message quotes it: short, and with anything unprintable escaped. */
function quoted(text: string): string {
  const chars = Array.from(text);
  const clipped = chars.length > 40 ? `${chars.slice(0, 37).join('')}...` : text;
  // eslint-disable-next-line no-control-regex
  return `'${clipped.replace(/[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/gu, (c) => `\\u${c.codePointAt(0)!.toString(16).padStart(4, '0')}`)}'`;
}

const pad = (n: number) => String(n).padStart(2, '0');
const written = (root: string, month: number, year: number) => `${root} ${pad(month)}-${pad(year % 100)}`;

/** The calendar date in America/Chicago at an instant. */
export function chicagoDate(now: Date): CalendarDate {
  const wall = new Date(chicagoWallClock(now.getTime()));
  return { year: wall.getUTCFullYear(), month: wall.getUTCMonth() + 1, day: wall.getUTCDate() };
}

// Calendar arithmetic on UTC midnights: no time zone can shift a day here.
const DAY = 86_400_000;
const utc = (year: number, month: number, day: number) => Date.UTC(year, month - 1, day);
const weekday = (time: number) => new Date(time).getUTCDay();
const isBusinessDay = (time: number) => weekday(time) !== 0 && weekday(time) !== 6;
const toDate = (time: number): CalendarDate => {
  const d = new Date(time);
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
};

/** `count` business days before `time` (Monday–Friday; holidays are not modelled, §9.2). */
function businessDaysBefore(time: number, count: number): number {
  let t = time;
  for (let left = count; left > 0; ) {
    t -= DAY;
    if (isBusinessDay(t)) left--;
  }
  return t;
}

/** The last business day on or before `time`. */
function businessDayOnOrBefore(time: number): number {
  let t = time;
  while (!isBusinessDay(t)) t -= DAY;
  return t;
}

/** The nth `dow` (0 Sunday … 6 Saturday) of a month. */
function nthWeekday(year: number, month: number, dow: number, n: number): number {
  const first = utc(year, month, 1);
  return first + (((dow - weekday(first) + 7) % 7) + 7 * (n - 1)) * DAY;
}

/** The anchor date A(y, m) of a contract month (§9.2). */
export function anchorDate(family: RollFamily, year: number, month: number): CalendarDate {
  const previous = month === 1 ? { year: year - 1, month: 12 } : { year, month: month - 1 };
  switch (family) {
    case 'equity':
      return toDate(nthWeekday(year, month, 5, 3));
    case 'fx':
      return toDate(nthWeekday(year, month, 3, 3) - 2 * DAY);
    case 'firstNotice':
      // The last business day of the month before: the day before the 1st, or earlier.
      return toDate(businessDayOnOrBefore(utc(year, month, 1) - DAY));
    case 'crude': {
      const the25th = utc(previous.year, previous.month, 25);
      const from = isBusinessDay(the25th) ? the25th : businessDayOnOrBefore(the25th - DAY);
      return toDate(businessDaysBefore(from, 3));
    }
    case 'natgas':
      return toDate(businessDaysBefore(utc(year, month, 1), 3));
  }
}

/** The roll date R(y, m) = A(y, m) − 8 calendar days: from then on the next contract is the front. */
export function rollDate(spec: ContractSpec, year: number, month: number): CalendarDate {
  const anchor = anchorDate(spec.family, year, month);
  return toDate(utc(anchor.year, anchor.month, anchor.day) - 8 * DAY);
}

/** The front contract on a date: the earliest listed one whose roll date is after it (§9.2). */
export function frontContract(spec: ContractSpec, date: CalendarDate): { year: number; month: number } {
  const today = utc(date.year, date.month, date.day);
  for (let year = date.year - 1; ; year++) {
    for (const month of spec.months) {
      const roll = rollDate(spec, year, month);
      if (utc(roll.year, roll.month, roll.day) > today) return { year, month };
    }
  }
}

/** A one-digit year: the nearest year ending in it that is not before last year (§9.1). */
function yearFromDigit(digit: number, current: number): number {
  let year = current - 1 - ((current - 1) % 10) + digit;
  if (year < current - 1) year += 10;
  return year;
}

const DATED = /^([A-Z0-9]{1,12}) (\d{1,2})-(\d{2})$/;
const CONTINUOUS = /^([A-Z0-9]{1,12}?)(\d+)!$/;
const CODE = new RegExp(`^([A-Z0-9]{1,12}?)([${MONTH_CODES}])(\\d{1,2})$`);
const NAMED = new RegExp(`^([A-Z0-9]{1,12}) (${MONTH_NAMES.join('|')})(\\d{2})$`);
const ROOT = /^[A-Z0-9]{1,12}$/;

/**
 * One text to one dated contract. `now` is read only for the forms that need a date (front
 * month, one-digit years), as the calendar date in America/Chicago. `why` is the reason alone;
 * callers prefix `Invalid request: instrument: `.
 */
export function resolveInstrument(text: string, now: Date, lookup: (root: string) => ContractSpec | undefined = contractSpec): Resolution {
  const input = asciiUpper(text.trim().replace(/\s+/g, ' '));
  const dated = DATED.exec(input);
  if (dated) {
    const [, root, mm, yy] = dated as unknown as [string, string, string, string];
    const month = Number(mm);
    if (month < 1 || month > 12) return { ok: false, why: `month must be 01-12, got '${mm}' in ${quoted(text)}` };
    return { ok: true, instrument: written(root, month, Number(yy)), root, month, year: 2000 + Number(yy), form: 'dated' };
  }
  const known = (root: string, resolve: (spec: ContractSpec) => Resolution): Resolution => {
    const spec = lookup(root);
    if (!spec) return { ok: false, why: `unknown root '${root}' in ${quoted(text)}; known roots: ${CONTRACT_ROOTS.join(', ')}` };
    return resolve(spec);
  };
  const front = (root: string, form: InstrumentForm) =>
    known(root, (spec) => {
      const { year, month } = frontContract(spec, chicagoDate(now));
      return { ok: true, instrument: written(root, month, year), root, month, year, form };
    });
  const continuous = CONTINUOUS.exec(input);
  if (continuous) {
    const [, root, n] = continuous as unknown as [string, string, string];
    if (Number(n) !== 1) return { ok: false, why: `${quoted(text)} is not supported; only the front month (${root}1!) is` };
    return front(root, 'continuous');
  }
  if (ROOT.test(input) && lookup(input)) return front(input, 'front');
  const code = CODE.exec(input) ?? NAMED.exec(input);
  if (code) {
    const [, root, letter, digits] = code as unknown as [string, string, string, string];
    const month = letter.length === 1 ? MONTH_CODES.indexOf(letter) + 1 : MONTH_NAMES.indexOf(letter) + 1;
    return known(root, () => {
      const year = digits.length === 2 ? 2000 + Number(digits) : yearFromDigit(Number(digits), chicagoDate(now).year);
      return { ok: true, instrument: written(root, month, year), root, month, year, form: letter.length === 1 ? 'code' : 'monthName' };
    });
  }
  if (ROOT.test(input)) return front(input, 'front');
  return { ok: false, why: `must be <SYMBOL> <MM-YY> (e.g. 'ES 09-25'), or ES, ES1!, ESH26, ESH6, ES MAR26; got ${quoted(text)}` };
}
