import { idText, text } from './json';
import { cents } from '@erp/contracts';
import { parseAmount, quantityText } from './money';

/** What a WooCommerce product delivery asks of us. */
export interface ProductoIntent {
  id_externo: string;
  eliminado: boolean;
  version: Date | null;
  sku: string | null;
  nombre: string | null;
  /** Sale price when set, else the regular price, else `price`. */
  precio: string | null;
  activo: boolean;
  /** Absolute stock when the product manages stock; null otherwise. */
  stock: string | null;
}

type Obj = Record<string, unknown>;
const price = (v: unknown): string | null => {
  const amount = parseAmount(v);
  return amount !== null && amount.gte(0) ? cents(amount) : null;
};

export function wooProductoIntent(payload: unknown): ProductoIntent | null {
  const p = (payload && typeof payload === 'object' ? payload : {}) as Obj;
  const id = idText(p.id);
  if (!id) return null;
  const keys = Object.keys(p);
  if (keys.length === 1) {
    return { id_externo: id, eliminado: true, version: null, sku: null, nombre: null, precio: null, activo: false, stock: null };
  }
  const modified = text(p.date_modified_gmt);
  const version = modified ? new Date(/[zZ]$/.test(modified) ? modified : `${modified}Z`) : null;
  const stock =
    p.manage_stock === true && (typeof p.stock_quantity === 'number' || typeof p.stock_quantity === 'string')
      ? parseAmount(p.stock_quantity)
      : null;
  return {
    id_externo: id,
    eliminado: false,
    version: version && !Number.isNaN(version.getTime()) ? version : null,
    sku: text(p.sku),
    nombre: text(p.name),
    precio: price(p.sale_price) ?? price(p.regular_price) ?? price(p.price),
    activo: p.status === 'publish',
    stock: stock === null ? null : quantityText(stock),
  };
}
