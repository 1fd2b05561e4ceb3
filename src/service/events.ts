/**
 * The WebSocket events of service-reference.md §4.7 and §5.3 as a client reads them: `marketData`,
 * `pnlUpdate` and the stream `error`. As with replies (shapes.ts), only what is used is typed,
 * nothing beyond the reference is required, and a field of the wrong type is dropped. The element
 * of `pnlUpdate.accounts` is undocumented (§4.7: "read known keys and ignore the rest"), so none
 * of its fields is required.
 */
import * as z from 'zod';
import { type PositionRead, type QuoteRead, readSchemas } from './shapes.js';

export interface PnlAccountRead {
  account?: string;
  realizedProfitLoss?: number;
  unrealizedProfitLoss?: number;
  cashValue?: number;
  netLiquidation?: number;
  positions?: PositionRead[];
}

export interface PnlUpdateRead {
  type: 'pnlUpdate';
  epoch?: number;
  accounts: PnlAccountRead[];
}

export interface StreamErrorRead {
  type: 'error';
  action?: string;
  error: string;
}

const soft = <T extends z.ZodType>(schema: T) => schema.optional().catch(undefined);

let pnl: z.ZodType<PnlUpdateRead> | undefined;
function pnlSchema(): z.ZodType<PnlUpdateRead> {
  const position = readSchemas.position();
  // A position a client cannot read is left out rather than losing the account's figures.
  const positions = z.array(z.unknown()).transform((list) =>
    list.flatMap((p) => {
      const read = position.safeParse(p);
      return read.success ? [read.data] : [];
    }),
  );
  const account = z.looseObject({
    account: soft(z.string()),
    realizedProfitLoss: soft(z.number()),
    unrealizedProfitLoss: soft(z.number()),
    cashValue: soft(z.number()),
    netLiquidation: soft(z.number()),
    positions: soft(positions),
  });
  return (pnl ??= z
    .looseObject({ type: z.literal('pnlUpdate'), epoch: soft(z.number()), accounts: z.array(account) })
    .transform((u) => u as PnlUpdateRead));
}

/**
 * The quotes of a `marketData` event that a client can read (each needs its `instrument`), each
 * beside the object as it came; undefined when the event is not one.
 */
export function readMarketData(event: unknown): Array<{ quote: QuoteRead; raw: unknown }> | undefined {
  const e = event as { type?: unknown; quotes?: unknown } | null;
  if (e?.type !== 'marketData' || !Array.isArray(e.quotes)) return undefined;
  const quotes: unknown[] = e.quotes;
  const schema = readSchemas.quotes();
  return quotes.flatMap((raw) => {
    const read = schema.safeParse(raw);
    return read.success && !Array.isArray(read.data) ? [{ quote: read.data, raw }] : [];
  });
}

export function readPnlUpdate(event: unknown): PnlUpdateRead | undefined {
  const read = pnlSchema().safeParse(event);
  return read.success ? read.data : undefined;
}

export function readStreamError(event: unknown): StreamErrorRead | undefined {
  const e = event as { type?: unknown; action?: unknown; error?: unknown } | null;
  if (e?.type !== 'error' || typeof e.error !== 'string') return undefined;
  return { type: 'error', action: typeof e.action === 'string' ? e.action : undefined, error: e.error };
}
