import type { EstadoVenta, EstadoVentaCreacion } from '@erp/contracts';
import { Decimal, cents } from '@erp/contracts';

/** `Pagada` is stored as `Completada` (DESIGN §4); the other accepted values are stored as sent. */
export function storedEstado(estado: EstadoVentaCreacion): EstadoVenta {
  return estado === 'Pagada' ? 'Completada' : estado;
}

/** Completed and pending sales take stock when created; quotations never do. */
export function takesStock(estado: EstadoVenta): boolean {
  return estado === 'Completada' || estado === 'Pendiente';
}

export interface Payment {
  monto_pago: string | null;
  cambio: string;
  /** What the customer still owes: the unpaid part of a pending sale, 0 otherwise. */
  saldo: string;
}

/** `monto_pago` defaults to the total for `Pagada`; `cambio` defaults to 0. */
export function payment(estado: EstadoVentaCreacion, total: string, montoPago: string | undefined, cambio: string | undefined): Payment {
  const monto = montoPago !== undefined ? cents(montoPago) : estado === 'Pagada' ? cents(total) : null;
  const owed = storedEstado(estado) === 'Pendiente' ? Decimal.max(new Decimal(total).minus(monto ?? 0), 0) : new Decimal(0);
  return { monto_pago: monto, cambio: cents(cambio ?? 0), saldo: cents(owed) };
}

/** `correlativo`: the document type's prefix followed by the number. */
export function formatCorrelativo(prefijo: string, numero: number): string {
  return `${prefijo}${numero}`;
}

export interface DocumentoRow {
  id: number;
  sucursal_id: number;
  nombre: string;
  prefijo: string;
  correlativo: number;
  activo: boolean;
  solo_cotizacion: boolean;
}

/** Why a document type cannot issue this sale, or undefined when it can. */
export function documentoProblem(
  doc: DocumentoRow | undefined,
  id: number,
  sucursalId: number | undefined,
  estado: EstadoVenta,
): string | undefined {
  if (!doc) return `El tipo de documento ${id} no existe`;
  if (!doc.activo) return `El tipo de documento "${doc.nombre}" está inactivo`;
  if (sucursalId !== undefined && doc.sucursal_id !== sucursalId)
    return `El tipo de documento "${doc.nombre}" no pertenece a la sucursal ${sucursalId}`;
  if (doc.solo_cotizacion && estado !== 'Cotizacion') return `El tipo de documento "${doc.nombre}" solo se usa para cotizaciones`;
  return undefined;
}

/**
 * A customer with a credit limit above 0 cannot owe more than it: what pending sales already
 * owe plus what this sale adds. Undefined when within the limit.
 */
export function creditProblem(cliente: { nombre: string; limite_credito: string }, adeudado: string, nuevo: string): string | undefined {
  const limite = new Decimal(cliente.limite_credito);
  if (limite.lte(0) || new Decimal(nuevo).isZero()) return undefined;
  const after = new Decimal(adeudado).plus(nuevo);
  if (after.lte(limite)) return undefined;
  return `La venta excede el límite de crédito del cliente "${cliente.nombre}": límite ${cents(limite)}, saldo pendiente ${cents(adeudado)}, esta venta ${cents(nuevo)}, disponible ${cents(Decimal.max(limite.minus(adeudado), 0))}`;
}

/** Inventory answers problems per reservation line (`lineas.N.…`); the caller knows them as `detalles.M.…`. */
export function remapReserveDetails(
  details: Record<string, string[]> | undefined,
  lineIndexes: readonly number[][],
): Record<string, string[]> {
  const remapped: Record<string, string[]> = {};
  for (const [key, messages] of Object.entries(details ?? {})) {
    const m = /^lineas\.(\d+)(\..+)?$/.exec(key);
    const targets = m ? (lineIndexes[Number(m[1])] ?? []) : [];
    if (targets.length === 0) {
      (remapped.detalles ??= []).push(...messages);
      continue;
    }
    for (const index of targets) (remapped[`detalles.${index}${m![2] ?? ''}`] ??= []).push(...messages);
  }
  return remapped;
}

/** One message for the envelope from the details of a refused sale. */
export function summaryMessage(details: Record<string, string[]>): string {
  const messages = Object.values(details).flat();
  if (messages.length === 0) return 'La venta no cumple las reglas';
  return messages.length === 1 ? messages[0]! : `${messages[0]!} (y ${messages.length - 1} problema${messages.length > 2 ? 's' : ''} más)`;
}
