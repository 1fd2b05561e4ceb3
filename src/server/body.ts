/**
 * How `trade serve` reads a request body (service-reference.md §1.3 and the project's decisions
 * in docs/service-reference.md §11): whatever the Content-Type says, or without one, the body is
 * JSON in UTF-8 (RFC 8259 §8.1), so a client's HTTP stack cannot change how it is read. What
 * common stacks add is taken: a `charset=utf-8` parameter, a byte-order mark (.NET), chunked
 * transfer (fastify and Node reassemble it). What cannot be read faithfully is refused with the
 * field named and nothing done: bytes that are not UTF-8, a compressed body, text that is not
 * JSON, a key given twice, a key that could reach a prototype.
 */
import type { FastifyInstance } from 'fastify';
import { formatIssues } from '../common/errors.js';
import { show } from '../service/order.js';
import { duplicateKeyIssues, duplicateKeys } from '../service/strict-json.js';

/** A body `trade serve` refuses: the status and the whole `error` text of its `{error}` reply. */
export class BodyError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
  }
}

const NOT_JSON = 'Invalid request: body: not valid JSON';
const PROTO_KEY = 'Invalid request: body: __proto__ and constructor keys are not allowed';

/** Fatal: a byte that is not UTF-8 is an error, never a silent U+FFFD. A leading BOM is dropped. */
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The `charset` parameter of a Content-Type, lower-cased, or undefined. */
function charsetOf(contentType: string | undefined): string | undefined {
  const match = contentType && /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType);
  return match ? match[1]!.toLowerCase() : undefined;
}

const UTF8_NAMES = new Set(['utf-8', 'utf8', 'us-ascii', 'ascii']);

/** The body's text, or a refusal that says why it cannot be read as UTF-8. */
function decode(bytes: Buffer, contentType: string | undefined): string {
  try {
    return utf8.decode(bytes);
  } catch {
    const charset = charsetOf(contentType);
    const said = charset && !UTF8_NAMES.has(charset) ? ` (the Content-Type says charset=${show(charset)}; send UTF-8)` : '';
    throw new BodyError(400, `Invalid request: body: not valid UTF-8${said}`);
  }
}

/**
 * A body as JSON; empty (or only spaces) is no body. Keys that could reach a prototype are
 * refused outright, as fastify's own parser does, so no later merge can be tricked by them; so is
 * a key given twice (strict-json.ts: JSON.parse would quietly keep the last one).
 */
export function parseBody(bytes: Buffer, contentType?: string): unknown {
  const text = decode(bytes, contentType);
  if (text.trim() === '') return undefined;
  const risky = text.includes('__proto__') || text.includes('constructor');
  let value: unknown;
  try {
    value = risky
      ? JSON.parse(text, (key, value: unknown) => {
          if (key === '__proto__' || key === 'constructor') throw new BodyError(400, PROTO_KEY);
          return value;
        })
      : JSON.parse(text);
  } catch (error) {
    throw error instanceof BodyError ? error : new BodyError(400, NOT_JSON);
  }
  const duplicates = value !== null && typeof value === 'object' ? duplicateKeys(text) : [];
  if (duplicates.length > 0) throw new BodyError(400, formatIssues(duplicateKeyIssues('body', duplicates)));
  return value;
}

/**
 * Reads every body as parseBody does, whatever its Content-Type. A body sent with a
 * Content-Encoding (gzip, deflate, br) is refused with 415: the service documents none, and an
 * inflated body would escape the size limit.
 */
export function registerBodyParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request, bytes, done) => {
    const encoding = request.headers['content-encoding']?.trim().toLowerCase();
    if (encoding && encoding !== 'identity') {
      done(new BodyError(415, `Invalid request: body: Content-Encoding ${show(encoding)} is not accepted; send the JSON uncompressed`), undefined);
      return;
    }
    try {
      done(null, parseBody(bytes as Buffer, request.headers['content-type']));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
}
