import type { Row } from '../schema-clients';

/** `producto/bodega` → exact quantity text (4 decimals), from rows with those columns. */
export const byProductWarehouse = (rows: Row[]) => new Map(rows.map((r) => [`${r.producto_id}/${r.bodega_id}`, String(r.cantidad)]));
/** A quantity with up to 4 decimals as an integer of ten-thousandths, so comparisons are exact. */
export const units = (text: string | undefined): bigint => {
  if (text === undefined) return 0n;
  const [int, frac = ''] = text.split('.');
  const negative = int!.startsWith('-');
  const magnitude = BigInt(int!.replace('-', '')) * 10_000n + BigInt((frac + '0000').slice(0, 4));
  return negative ? -magnitude : magnitude;
};
export const show = (value: bigint) => {
  const abs = value < 0n ? -value : value;
  const frac = (abs % 10_000n).toString().padStart(4, '0').replace(/0+$/, '');
  return `${value < 0n ? '-' : ''}${abs / 10_000n}${frac ? `.${frac}` : ''}`;
};
/** Where two per-product-and-warehouse maps differ, described with `describe`. */
export function differences(
  a: Map<string, string>,
  b: Map<string, string>,
  describe: (key: string, a: string, b: string) => string,
): string[] {
  const out: string[] = [];
  const keys = new Set(a.keys());
  for (const key of b.keys()) keys.add(key);
  for (const key of keys) {
    const x = units(a.get(key));
    const y = units(b.get(key));
    if (x !== y) out.push(describe(key, show(x), show(y)));
  }
  return out;
}
