/**
 * Money in integer cents, so generated totals are exact without a decimal library:
 * prices include tax; sub_total = round(total / (1 + rate/100), 2) half up; iva = total − sub_total
 * (the rule of DESIGN §4, the one the sales service applies).
 */
export function cents(n: number): string {
  const sign = n < 0 ? '-' : '';
  const abs = Math.abs(n);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

/** Net of tax, in cents, for a tax-inclusive total in cents and a rate in percent (integer). */
export function netOfTax(totalCents: number, rate: number): number {
  if (rate === 0) return totalCents;
  // round(total × 100 / (100 + rate)) half up, in integers.
  return Math.floor((2 * totalCents * 100 + (100 + rate)) / (2 * (100 + rate)));
}
