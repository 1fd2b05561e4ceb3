/**
 * Round trips from executions (issue 30): each account's fills of an instrument, in time order,
 * paired first-in first-out. An entry fill opens a lot; a fill on the other side closes the oldest
 * lots first, and each part it closes is one trade, so a partial close closes part of a trade, and
 * a fill larger than the position (a reverse) closes the trades and opens the next with what is
 * left. A fill's commission is shared among the trades it takes part in by quantity.
 *
 * When a fill carries the position's size after it (the Execution's `position`) and that is not
 * what the pairing counts, fills are missing from what was read (the execution history has a gap):
 * the lots are brought to the size the service reported, the oldest closed first, and a lot whose
 * entry was never seen has no price; a trade that closes it has no P&L and stays out of the figures.
 */
import { contractSpec, rootOf } from '../service/contracts.js';

export interface ReportFill {
  /** The execution's id. */
  id: string;
  account: string;
  instrument: string;
  action: 'BUY' | 'SELL';
  quantity: number;
  price: number;
  /** Epoch ms. */
  time: number;
  /** Money charged for the fill. */
  commission: number;
  orderId?: string;
  /** The position's size after the fill (unsigned) as the service said it; undefined when it did not. */
  positionAfter?: number;
}

export type Side = 'Long' | 'Short';

export interface Trade {
  account: string;
  instrument: string;
  side: Side;
  quantity: number;
  /** Epoch ms; null when the entry was not seen (a gap before it). */
  entryTime: number | null;
  entryPrice: number | null;
  exitTime: number;
  exitPrice: number;
  entryExecutionId: string | null;
  exitExecutionId: string;
  /** Money before commission; null when the entry price is not known. */
  grossProfit: number | null;
  commission: number;
  netProfit: number | null;
}

/** What is left open: lots on one side, oldest first. */
export interface OpenLots {
  account: string;
  instrument: string;
  side: Side;
  lots: Array<{ quantity: number; price: number | null; time: number | null; executionId: string | null }>;
}

export interface Paired {
  trades: Trade[];
  open: OpenLots[];
  /** Where the fills do not add up to the positions the service reported: fills missing before these. */
  gaps: Array<{ account: string; instrument: string; time: number; executionId: string; reported: number; counted: number }>;
}

/** Money per 1.0 of price (§10), or undefined for a root the contract table does not know. */
export function knownPointValue(instrument: string): number | undefined {
  return contractSpec(rootOf(instrument))?.pointValue;
}

interface Lot {
  quantity: number;
  price: number | null;
  time: number | null;
  /** The entry commission not yet given to a trade. */
  commission: number;
  executionId: string | null;
}

/** Fills (any order) paired into trades, each account and instrument on its own; trades in the order they closed. */
export function pairFills(fills: ReportFill[]): Paired {
  const ordered = fills.map((fill, index) => ({ fill, index })).sort((a, b) => a.fill.time - b.fill.time || a.index - b.index);
  const books = new Map<string, { side: 1 | -1; lots: Lot[] }>();
  const trades: Trade[] = [];
  const gaps: Paired['gaps'] = [];
  for (const { fill } of ordered) {
    const key = `${fill.account}\u0000${fill.instrument}`;
    const book = books.get(key) ?? { side: 1, lots: [] };
    books.set(key, book);
    const sign = fill.action === 'BUY' ? 1 : -1;
    const pointValue = knownPointValue(fill.instrument) ?? 1;
    const perUnit = fill.quantity > 0 ? fill.commission / fill.quantity : 0;
    let remaining = fill.quantity;
    while (remaining > 0 && book.lots.length > 0 && book.side === -sign) {
      const lot = book.lots[0]!;
      const take = Math.min(lot.quantity, remaining);
      const entryCommission = (lot.commission * take) / lot.quantity;
      lot.commission -= entryCommission;
      lot.quantity -= take;
      if (lot.quantity === 0) book.lots.shift();
      remaining -= take;
      const side: Side = book.side === 1 ? 'Long' : 'Short';
      const gross = lot.price === null ? null : (fill.price - lot.price) * take * pointValue * book.side;
      const commission = entryCommission + perUnit * take;
      trades.push({
        account: fill.account,
        instrument: fill.instrument,
        side,
        quantity: take,
        entryTime: lot.time,
        entryPrice: lot.price,
        exitTime: fill.time,
        exitPrice: fill.price,
        entryExecutionId: lot.executionId,
        exitExecutionId: fill.id,
        grossProfit: gross,
        commission,
        netProfit: gross === null ? null : gross - commission,
      });
    }
    if (remaining > 0) {
      if (book.lots.length === 0) book.side = sign;
      book.lots.push({ quantity: remaining, price: fill.price, time: fill.time, commission: perUnit * remaining, executionId: fill.id });
    }
    reconcile(book, fill, sign, gaps);
  }
  const open: OpenLots[] = [];
  for (const [key, book] of books) {
    if (book.lots.length === 0) continue;
    const [account, instrument] = key.split('\u0000') as [string, string];
    open.push({
      account,
      instrument,
      side: book.side === 1 ? 'Long' : 'Short',
      lots: book.lots.map(({ quantity, price, time, executionId }) => ({ quantity, price, time, executionId })),
    });
  }
  open.sort((a, b) => a.account.localeCompare(b.account) || a.instrument.localeCompare(b.instrument));
  return { trades, open, gaps };
}

/** The lots brought to the size the service reported after the fill, when it reported one and it differs. */
function reconcile(book: { side: 1 | -1; lots: Lot[] }, fill: ReportFill, sign: 1 | -1, gaps: Paired['gaps']): void {
  if (fill.positionAfter === undefined) return;
  const counted = book.lots.reduce((sum, lot) => sum + lot.quantity, 0);
  if (counted === fill.positionAfter) return;
  gaps.push({ account: fill.account, instrument: fill.instrument, time: fill.time, executionId: fill.id, reported: fill.positionAfter, counted });
  let extra = counted - fill.positionAfter;
  // Closed by fills not seen: the oldest lots go first, as FIFO would have closed them.
  while (extra > 0) {
    const lot = book.lots[0]!;
    const take = Math.min(lot.quantity, extra);
    lot.commission -= (lot.commission * take) / lot.quantity;
    lot.quantity -= take;
    if (lot.quantity === 0) book.lots.shift();
    extra -= take;
  }
  // Opened by fills not seen: a lot with no known entry, older than every lot counted.
  if (extra < 0) {
    if (counted === 0) book.side = sign;
    book.lots.unshift({ quantity: -extra, price: null, time: null, commission: 0, executionId: null });
  }
}
