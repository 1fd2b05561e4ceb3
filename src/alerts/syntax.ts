/**
 * The text of an alert message read into fields (webhook-reference.md §2.1–§2.3, §2.5): split on
 * `;`, comments dropped, names lower-cased, the last of a repeated field kept. Pure: no clock, no
 * I/O. What fails here is the message's *format* (the webhook answers it 400 `invalid_format`);
 * what a value means is message.ts's to judge.
 */

/** The message is not `key=value;` text (400 `invalid_format`, §1.1, §2.1, §6.3). */
export class AlertFormatError extends Error {
  readonly code = 'invalid_format';
  constructor(readonly detail: string) {
    super(`invalid_format: ${detail}`);
  }
}

export interface Fields {
  /** Every field by its lower-cased name, the last value of a repeated one; empty values left out (§2.1). */
  values: Record<string, string>;
  /** Names given more than once, in the order they were first repeated (§2.3). */
  repeated: string[];
  /** The names in the order they first appear. */
  order: string[];
}

/** At most this many characters of a piece go into a message. */
const SHOWN = 60;
const clip = (text: string) => (text.length > SHOWN ? `${text.slice(0, SHOWN - 3)}...` : text);
/** ASCII letters only, as every other case-insensitive match of the project (`ſ` stays `ſ`). */
export const asciiLower = (text: string) => text.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());

const BOM = '\ufeff';

/**
 * Drops comments (§2.5): from a `//` that starts a line or a `;`-piece to the end of its line.
 * A `//` inside a value (`notes=see http://x`) is not at the start of a piece and stays.
 */
function dropComments(text: string): string {
  return text
    .split('\n')
    .map((line) => {
      let pieceStart = true;
      for (let i = 0; i < line.length; i++) {
        const c = line[i]!;
        if (c === ';') pieceStart = true;
        else if (c === '/' && pieceStart && line[i + 1] === '/') return line.slice(0, i);
        else if (c !== ' ' && c !== '\t' && c !== '\r') pieceStart = false;
      }
      return line;
    })
    .join('\n');
}

/** A JSON object or array: TradingView sends JSON when the message is JSON, and the webhook refuses it (§1.1). */
function isJson(text: string): boolean {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return false;
  try {
    const value: unknown = JSON.parse(trimmed);
    return value !== null && typeof value === 'object';
  } catch {
    return false;
  }
}

const LINE_BREAK = /[\r\n]/;
const firstLine = (text: string) => text.split(LINE_BREAK)[0]!.trim();

/** Reads a message's fields; throws AlertFormatError when it is not `key=value;` text. */
export function readFields(message: string): Fields {
  const text = message.startsWith(BOM) ? message.slice(1) : message;
  if (isJson(text)) throw new AlertFormatError('the webhook takes key=value; text, not JSON');
  const values: Record<string, string> = {};
  const repeated: string[] = [];
  const order: string[] = [];
  const command: string[] = [];
  for (const rawPiece of dropComments(text).split(';')) {
    const piece = rawPiece.trim();
    if (piece === '') continue;
    const eq = piece.indexOf('=');
    if (eq < 0) {
      if (LINE_BREAK.test(piece)) throw new AlertFormatError(`missing ';' after '${clip(firstLine(piece))}'`);
      throw new AlertFormatError(`field '${clip(piece)}' has no '='`);
    }
    const rawName = piece.slice(0, eq).trim();
    const value = piece.slice(eq + 1).trim();
    // A line break before the `=` or inside the value: the line before it lacks its `;` (§2.1).
    if (LINE_BREAK.test(rawName)) throw new AlertFormatError(`missing ';' after '${clip(firstLine(rawName))}'`);
    if (LINE_BREAK.test(value)) throw new AlertFormatError(`missing ';' after '${clip(`${rawName}=${firstLine(value)}`)}'`);
    if (rawName === '') throw new AlertFormatError(`field '${clip(piece)}' has no name before its '='`);
    const name = asciiLower(rawName);
    if (value === '') continue;
    if (name === 'command') command.push(value);
    if (Object.hasOwn(values, name)) {
      if (!repeated.includes(name)) repeated.push(name);
    } else {
      order.push(name);
    }
    values[name] = value;
  }
  const commands = new Set(command.map(commandWord));
  if (commands.size > 1) throw new AlertFormatError('more than one command');
  if (values.command !== undefined && values.kill_switch !== undefined)
    throw new AlertFormatError('kill_switch is a message of its own; send it without a command');
  return { values, repeated, order };
}

/** A command's word as the webhook matches it (§2.2): any case, `_`, `-` and spaces ignored. */
export function commandWord(value: string): string {
  return value.replace(/[a-z]+/g, (letters) => letters.toUpperCase()).replace(/[ \t_-]/g, '');
}

/** Every value a `key` field has in the text, read or not (a message that fails its format still holds its key). */
export function keysIn(message: string): string[] {
  return [...message.matchAll(/(?:^|[;\n\r\ufeff])[ \t]*key[ \t]*=([^;\r\n]*)/gi)].map((m) => m[1]!.trim()).filter((k) => k !== '');
}

/**
 * The message as Alert History keeps it (§6.2): the `key` field's value replaced by `***`,
 * everything else as received.
 */
export function redactKey(message: string): string {
  return message.replace(/(^|[;\n\r\ufeff])([ \t]*key[ \t]*=)([^;\r\n]*)/gi, (_all, before: string, name: string, value: string) =>
    value.trim() === '' ? `${before}${name}${value}` : `${before}${name}***`,
  );
}
