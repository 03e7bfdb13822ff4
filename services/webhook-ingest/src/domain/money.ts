/**
 * Exact money and quantities for mapping platform amounts: decimal strings in, decimal strings
 * out, computed in scaled integers (never binary floats).
 */
const SCALE = 4;
const FACTOR = 10n ** BigInt(SCALE);

export function toUnits(value: unknown): bigint | null {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : '';
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
  if (!m) return null;
  const frac = (m[3] ?? '').padEnd(SCALE, '0');
  // Digits beyond the scale are rounded half up.
  let units = BigInt(m[2]!) * FACTOR + BigInt(frac.slice(0, SCALE) || '0');
  if (frac.length > SCALE && Number(frac[SCALE]) >= 5) units += 1n;
  return m[1] === '-' ? -units : units;
}

export function fromUnits(units: bigint, decimals = 2): string {
  const negative = units < 0n;
  let abs = negative ? -units : units;
  const drop = 10n ** BigInt(SCALE - decimals);
  abs = (abs + drop / 2n) / drop; // half up
  const base = 10n ** BigInt(decimals);
  const whole = abs / base;
  const frac = abs % base;
  const text = decimals > 0 ? `${whole}.${frac.toString().padStart(decimals, '0')}` : `${whole}`;
  return negative && abs !== 0n ? `-${text}` : text;
}

/**
 * Splits a line total into a unit price (2 decimals, rounded up) and a discount, so that
 * quantity × price − discount is exactly the total the platform charged for the line.
 */
export function unitPriceAndDiscount(lineTotal: bigint, quantity: bigint): { precio: string; descuento: string } {
  const cent = 10n ** BigInt(SCALE - 2);
  if (quantity <= 0n || lineTotal <= 0n) return { precio: '0.00', descuento: '0.00' };
  // Units are scaled: total / quantity keeps the scale (quantity is scaled too).
  let unit = (lineTotal * FACTOR) / quantity;
  if ((lineTotal * FACTOR) % quantity !== 0n) unit += 1n;
  unit = ((unit + cent - 1n) / cent) * cent;
  const descuento = (unit * quantity) / FACTOR - lineTotal;
  return { precio: fromUnits(unit), descuento: fromUnits(descuento) };
}

/** Rounds units to whole cents, half away from zero. */
export function toCents(units: bigint): bigint {
  const cent = 10n ** BigInt(SCALE - 2);
  const negative = units < 0n;
  const abs = negative ? -units : units;
  const rounded = ((abs + cent / 2n) / cent) * cent;
  return negative ? -rounded : rounded;
}
