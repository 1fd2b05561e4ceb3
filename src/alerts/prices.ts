/**
 * Prices in alert messages (webhook-reference.md §2.4, §4.6): a plain US decimal, or a distance
 * from the instrument's reference price in percent, ticks, points or dollars. Pure: the reference
 * price and the contract's tick size and point value are given by the caller.
 */

export type PriceUnit = 'percent' | 'ticks' | 'points' | 'dollars';

export type PriceSpec =
  | { kind: 'absolute'; value: number; text: string }
  | { kind: 'relative'; amount: number; unit: PriceUnit; text: string };

const UNITS: Record<string, PriceUnit> = {
  '%': 'percent',
  tick: 'ticks',
  ticks: 'ticks',
  point: 'points',
  points: 'points',
  dollar: 'dollars',
  dollars: 'dollars',
  $: 'dollars',
};

const NUMBER = String.raw`(\d+(?:\.\d*)?|\.\d+)`;
/** `[+|-][$]<decimal>[ ][unit]`, the `$` before or after the number (§4.6 [decision]). */
const PRICE = new RegExp(String.raw`^([+-])?\s*(\$)?\s*${NUMBER}\s*(%|ticks?|points?|dollars?|\$)?$`, 'i');

/** A price or a relative price; a string says what is wrong. */
export function parsePrice(text: string): PriceSpec | string {
  const match = PRICE.exec(text.trim());
  const expected = `must be a price like 4500.25, or a distance like 5%, -25 ticks, 15 points, 250 dollars`;
  if (!match) return `${expected}, got '${text}'`;
  const [, sign, dollarBefore, digits, unitText] = match;
  if (dollarBefore && unitText) return `${expected}, got '${text}'`;
  const magnitude = Number(digits);
  const unitWord = dollarBefore ? '$' : unitText?.toLowerCase();
  if (unitWord === undefined) {
    // A plain number: an absolute price, which must be positive; a sign needs a unit to mean a distance.
    if (sign === '-') return `must be positive; a distance below the price needs a unit (-10 ticks, -0.5%), got '${text}'`;
    if (!(magnitude > 0)) return `must be a positive price, got '${text}'`;
    return { kind: 'absolute', value: magnitude, text };
  }
  return { kind: 'relative', amount: sign === '-' ? -magnitude : magnitude, unit: UNITS[unitWord]!, text };
}

export interface Contract {
  tickSize: number;
  /** Money per 1.0 of price, per contract. */
  pointValue: number;
}

/** The distance a relative price stands for, in price (§4.6: dollars ÷ point value per contract). */
export function distanceOf(spec: Extract<PriceSpec, { kind: 'relative' }>, reference: number, contract: Contract): number {
  switch (spec.unit) {
    case 'percent':
      return (reference * spec.amount) / 100;
    case 'ticks':
      return spec.amount * contract.tickSize;
    case 'points':
      return spec.amount;
    case 'dollars':
      return spec.amount / contract.pointValue;
  }
}

/**
 * The price a spec stands for: an absolute one as it is, a relative one from the reference,
 * rounded to the nearest tick with halves away from the reference (§4.6). Undefined when the
 * result is not a positive price.
 */
export function resolvePrice(spec: PriceSpec, reference: number, contract: Contract): number | undefined {
  if (spec.kind === 'absolute') return spec.value;
  const distance = distanceOf(spec, reference, contract);
  // In ticks, with a little slack for binary fractions (0.1 ticks of 0.1 is 0.9999999...).
  const ticks = distance / contract.tickSize;
  const rounded = Math.sign(ticks) * Math.floor(Math.abs(ticks) + 0.5 + 1e-9);
  const price = onTick(reference + rounded * contract.tickSize, contract.tickSize);
  return price > 0 ? price : undefined;
}

/** A price put on the tick grid, without binary noise (6000.2500000001 → 6000.25). */
export function onTick(price: number, tickSize: number): number {
  const decimals = Math.max(0, Math.ceil(-Math.log10(tickSize)) + 2);
  return Number((Math.round(price / tickSize) * tickSize).toFixed(decimals));
}

/** `-10 ticks`, `5%`: how a spec is shown (its text as written, trimmed). */
export const showPrice = (spec: PriceSpec): string => (spec.kind === 'absolute' ? String(spec.value) : spec.text.trim());
