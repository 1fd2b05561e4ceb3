/**
 * Order ids as people read and type them. Tables at a terminal show the ids the service made (32
 * hex characters) as their shortest unique prefix, at least 8 characters, as git shows commits;
 * every command that takes an order id takes such a prefix back. On the embedded engine a prefix
 * is unique among every order in the store; on a remote backend among the account's orders that
 * GetOrders lists (the orders a table shows), the one list the service has.
 */
import type { Backend } from '../backends/types.js';
import { parseAll, UsageError } from '../common/errors.js';
import { parseOrderId } from '../service/order.js';
import { allPages } from './call.js';
import { using, type CommandContext } from './context.js';

/** The length of the ids the service makes. */
export const FULL_ID_LENGTH = 32;
/** Shown ids are never shorter than this. */
export const MIN_SHOWN = 8;
/** A typed prefix shorter than this is only ever an exact id. */
export const MIN_PREFIX = 4;
/** Candidates an ambiguous prefix lists by name. */
const LISTED = 10;

const SERVICE_ID = /^[0-9a-f]{32}$/;

const commonLength = (a: string, b: string): number => {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
};

/**
 * Each of `ids` that the service made, shortened to the shortest prefix (at least `min`) that no
 * other id of `ids` or `others` starts with; other ids (a client's own `--order-id`) stay whole.
 */
export function uniquePrefixes(ids: Iterable<string>, others: Iterable<string> = [], min = MIN_SHOWN): Map<string, string> {
  const all = [...new Set([...ids, ...others])].sort();
  const shortened = new Map<string, string>();
  all.forEach((id, i) => {
    if (!SERVICE_ID.test(id)) {
      shortened.set(id, id);
      return;
    }
    const shared = Math.max(i > 0 ? commonLength(id, all[i - 1]!) : 0, i + 1 < all.length ? commonLength(id, all[i + 1]!) : 0);
    shortened.set(id, id.slice(0, Math.min(id.length, Math.max(min, shared + 1))));
  });
  return new Map([...ids].map((id) => [id, shortened.get(id)!]));
}

/**
 * How a table at this width shows ids: their unique prefixes (against the store on embedded, else
 * against `listed`, every order the read returned). Piped (no width), ids are shown whole.
 */
export async function idShortener(ctx: CommandContext, backend: Backend, ids: string[], listed: string[]): Promise<(id: string) => string> {
  if (ctx.io.width === undefined) return (id) => id;
  const service = ids.filter((id) => SERVICE_ID.test(id));
  let others = listed;
  if (backend.name === 'embedded' && service.length > 0) {
    const heads = [...new Set(service.map((id) => id.slice(0, MIN_SHOWN)))];
    others = await using(await ctx.openEngine(), (engine) => engine.orderIdsByPrefix(heads).map((row) => row.orderId));
  }
  const short = uniquePrefixes(ids, others);
  return (id) => short.get(id) ?? id;
}

interface Candidate {
  orderId: string;
  account?: string;
}

function chosen(prefix: string, candidates: Candidate[], command: string): string | undefined {
  const ids = [...new Set(candidates.map((c) => c.orderId))];
  if (ids.length <= 1) return ids[0];
  const named = ids.slice(0, LISTED).map((id) => {
    const accounts = [...new Set(candidates.filter((c) => c.orderId === id && c.account).map((c) => c.account))];
    return accounts.length > 0 ? `${id} (${accounts.join(', ')})` : id;
  });
  const more = ids.length > LISTED ? `, and ${ids.length - LISTED} more` : '';
  throw new UsageError(`Order id '${prefix}' is ambiguous: ${ids.length} orders start with it: ${named.join(', ')}${more}`, {
    hint: `Nothing was sent. Give more of the id; run 'trade ${command} --help' for examples.`,
  });
}

/**
 * The whole order id for what was typed: the id itself when an order has exactly it, else the one
 * order whose id starts with it (at least MIN_PREFIX characters, shorter than a full id). An
 * ambiguous prefix is a usage error listing the candidates (exit 2), before anything is sent; a
 * prefix of no order is returned as typed, so the operation answers with its usual "not found".
 * On a remote backend the list read (GetOrders of `account`) is made only for a prefix shorter
 * than a full id, and needs the account.
 */
export async function resolveOrderId(
  ctx: CommandContext,
  backend: Backend,
  raw: string,
  account: string | undefined,
  command: string,
): Promise<string> {
  const [id] = parseAll<[string]>([() => parseOrderId(raw)], { hint: `Nothing was sent. Run 'trade ${command} --help' for examples.` });
  if (id.length >= FULL_ID_LENGTH || id.length < MIN_PREFIX) return id;
  if (backend.name === 'embedded') {
    return using(await ctx.openEngine(), (engine) => {
      if (engine.getOrder(id, account)) return id;
      return chosen(id, engine.orderIdsByPrefix([id], account), command) ?? id;
    });
  }
  if (account === undefined) return id;
  const orders = (await allPages(backend, 'GetOrders', { account }, 'orders')).value.orders;
  if (orders.some((o) => o.orderId === id)) return id;
  const matches = orders.filter((o) => o.orderId.startsWith(id)).map((o) => ({ orderId: o.orderId, account: o.account }));
  return chosen(id, matches, command) ?? id;
}
