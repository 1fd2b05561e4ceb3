import { printable } from '../service/order.js';

/**
 * The 404 of an unknown route (service-reference.md §1.1, §6.1): the structured body with up to
 * three `did_you_mean` catalog entries closest to what was asked, so a client with a typo in a
 * path learns the right one instead of reading an empty list.
 */

/** The path of a URL without its query, shortened and printable: it goes into the 404's detail. */
export function routeOf(url: string): string {
  const path = url.split('?')[0]!;
  return printable(path.length > 100 ? `${path.slice(0, 97)}...` : path);
}

function levenshtein(a: string, b: string): number {
  if (a === b) return 0;
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** How far a request is from a catalog entry: segment by segment, a `{param}` matching anything. */
function distance(method: string, segments: string[], entry: string): number {
  const [entryMethod, entryPath] = entry.split(' ') as [string, string];
  const template = entryPath.split('/').filter(Boolean);
  let score = entryMethod === method ? 0 : 2;
  score += 4 * Math.abs(template.length - segments.length);
  for (let i = 0; i < Math.min(template.length, segments.length); i++) {
    const part = template[i]!;
    if (!part.startsWith('{')) score += levenshtein(part.toLowerCase(), segments[i]!.toLowerCase());
  }
  return score;
}

/** Up to three catalog entries near `METHOD path`, nearest first; none when nothing is close. */
export function didYouMean(method: string, path: string, catalog: readonly string[]): string[] {
  const segments = path.split('/').filter(Boolean);
  return catalog
    .map((entry) => ({ entry, score: distance(method, segments, entry) }))
    .filter(({ score }) => score <= 3)
    .sort((a, b) => a.score - b.score)
    .slice(0, 3)
    .map(({ entry }) => entry);
}

/** The body of a 404 for an unknown route. */
export function notFoundBody(method: string, url: string, catalog: readonly string[]): Record<string, unknown> {
  const path = routeOf(url);
  if (!/^\/v1\/api(\/|$)/i.test(path))
    return { success: false, error: 'not_found', detail: 'trade serve only serves /v1/api/... and /ws/stream' };
  return { success: false, error: 'not_found', detail: `No route ${method} ${path}`, did_you_mean: didYouMean(method, path, catalog) };
}
