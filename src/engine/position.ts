/** Position arithmetic: netting, average price and realized P&L, one fill at a time. */

export interface PositionState {
  /** Signed: positive long, negative short. */
  quantity: number;
  avgPrice: number | null;
  /** Price points times contracts. */
  realizedPnl: number;
  /** False once a closing fill had no known price: the P&L is then unknown. */
  pnlKnown: boolean;
}

export const FLAT: PositionState = { quantity: 0, avgPrice: null, realizedPnl: 0, pnlKnown: true };

/** The position after one fill: netting, average price and realized P&L. */
export function nextPosition(pos: PositionState, signedQty: number, price: number | null): PositionState {
  const quantity = pos.quantity + signedQty;
  if (pos.quantity === 0) return { ...pos, quantity, avgPrice: price };
  if (Math.sign(pos.quantity) === Math.sign(signedQty)) {
    const avgPrice =
      pos.avgPrice !== null && price !== null
        ? (pos.avgPrice * Math.abs(pos.quantity) + price * Math.abs(signedQty)) / Math.abs(quantity)
        : null;
    return { ...pos, quantity, avgPrice };
  }
  const closed = Math.min(Math.abs(pos.quantity), Math.abs(signedQty));
  let { realizedPnl, pnlKnown } = pos;
  if (price !== null && pos.avgPrice !== null) realizedPnl += (price - pos.avgPrice) * closed * Math.sign(pos.quantity);
  else pnlKnown = false;
  let avgPrice: number | null;
  if (quantity === 0) avgPrice = null;
  else if (Math.sign(quantity) === Math.sign(pos.quantity)) avgPrice = pos.avgPrice;
  else avgPrice = price;
  return { quantity, avgPrice, realizedPnl, pnlKnown };
}
