/**
 * Reply bodies answered again, unchanged, while the store is (GetPositions and GetAllPositions of a
 * store nothing has changed since: src/engine/service.ts), serialised once: a bot polling its
 * positions gets the same 4.6 KB of JSON without `JSON.stringify` at every request (issue 34).
 * A body is registered when it is made and must not be changed after; any other body is not kept.
 */
const texts = new WeakMap<object, string | undefined>();

/** Marks `body` as answered again unchanged: its JSON is made once, on first use. */
export function answeredAgain<T extends object>(body: T): T {
  texts.set(body, undefined);
  return body;
}

/** The JSON of a body marked by answeredAgain (made on first use, then kept with it); undefined for any other body. */
export function keptJson(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || !texts.has(body)) return undefined;
  let text = texts.get(body);
  if (text === undefined) texts.set(body, (text = JSON.stringify(body)));
  return text;
}
