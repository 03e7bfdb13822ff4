import type { ResolvedProduct, SaleCreateRequest, TenantContext } from '@erp/contracts';
import { MAX_SALE_AMOUNT } from '@erp/contracts';
import { Decimal, fromNumber } from './money';
import { documentoProblem, payment, storedEstado, takesStock, type DocumentoRow, type Payment } from './sale-rules';
import { resolveRate, saleTotals, taxLine, type SaleTotals, type TaxedLine } from './tax';

export type Resolution<T> = { ok: true; value: T } | { ok: false; message: string };

/** What the pipeline found for a request before anything is written. */
export interface SaleResolutions {
  sucursal: Resolution<{ id: number; nombre: string }>;
  bodega: Resolution<{ id: number; nombre: string; id_sucursal: number }>;
  productos: Array<Resolution<ResolvedProduct>>;
  documento: DocumentoRow | undefined;
  canal: { id: number; nombre: string; activo: boolean } | undefined;
  cliente: { id: number; nombre: string; limite_credito: string; activo: boolean } | undefined;
}

export interface PlannedLine extends TaxedLine {
  /** Position in `detalles`. */
  index: number;
  producto: ResolvedProduct;
  id_presentacion: number | null;
  costo: string;
  mueve_stock: boolean;
}

export interface SalePlan {
  empresaId: number;
  referencia: string | null;
  estado: ReturnType<typeof storedEstado>;
  cotizacion: boolean;
  sucursal: { id: number; nombre: string };
  bodega: { id: number; nombre: string };
  documento: DocumentoRow;
  canal: { id: number; nombre: string } | null;
  cliente: { id: number; nombre: string; limite_credito: string } | null;
  usuario: { id: number; nombre: string };
  lines: PlannedLine[];
  totals: SaleTotals;
  payment: Payment;
  /** Lines whose stock the sale takes (none for quotations and services). */
  stockLines: PlannedLine[];
}

export type PlanResult = { ok: true; plan: SalePlan } | { ok: false; details: Record<string, string[]> };

/**
 * Checks everything the request points to and computes the lines, the totals and the payment.
 * Pure: the caller resolves the references first; every problem is reported at once, by field.
 */
export function planSale(req: SaleCreateRequest, ctx: TenantContext, found: SaleResolutions): PlanResult {
  const details: Record<string, string[]> = {};
  const fail = (field: string, message: string) => void (details[field] ??= []).push(message);
  const estado = storedEstado(req.estado);

  const sucursalField = req.id_sucursal !== undefined ? 'id_sucursal' : 'sucursal';
  if (!found.sucursal.ok) fail(sucursalField, found.sucursal.message);
  const sucursalId = found.sucursal.ok ? found.sucursal.value.id : undefined;

  if (!found.bodega.ok) fail('id_bodega', found.bodega.message);
  else if (sucursalId !== undefined && found.bodega.value.id_sucursal !== sucursalId) {
    fail('id_bodega', `La bodega ${req.id_bodega} no pertenece a la sucursal ${found.sucursal.ok ? found.sucursal.value.nombre : sucursalId}`);
  }

  const docProblem = documentoProblem(found.documento, req.id_documento, sucursalId, estado);
  if (docProblem) fail('id_documento', docProblem);

  if (req.id_canal !== undefined) {
    if (!found.canal) fail('id_canal', `El canal ${req.id_canal} no existe`);
    else if (!found.canal.activo) fail('id_canal', `El canal "${found.canal.nombre}" está inactivo`);
  }
  if (req.id_cliente !== undefined) {
    if (!found.cliente) fail('id_cliente', `El cliente ${req.id_cliente} no existe`);
    else if (!found.cliente.activo) fail('id_cliente', `El cliente "${found.cliente.nombre}" está inactivo`);
  }
  if (!ctx.usuario) fail('usuario', 'La empresa no tiene un usuario activo: asocie la API key a un usuario o active un usuario administrador');

  const lines: PlannedLine[] = [];
  req.detalles.forEach((input, index) => {
    const productField = input.id_producto !== undefined ? `detalles.${index}.id_producto` : `detalles.${index}.codigo_producto`;
    const resolved = found.productos[index];
    if (!resolved || !resolved.ok) return fail(productField, resolved?.message ?? 'El producto no existe');
    const producto = resolved.value;
    if (producto.enable !== 1) return fail(productField, `El producto ${producto.codigo} está inactivo`);
    const taxed = taxLine({
      cantidad: fromNumber(input.cantidad),
      precio: input.precio !== undefined ? fromNumber(input.precio) : producto.precio,
      descuento: input.descuento !== undefined ? fromNumber(input.descuento) : '0',
      porcentaje_impuesto: resolveRate(input.porcentaje_impuesto !== undefined ? fromNumber(input.porcentaje_impuesto) : undefined, producto.porcentaje_impuesto, ctx.empresa.iva),
    });
    if (!taxed.ok) return fail(`detalles.${index}.${taxed.field}`, taxed.message);
    if (new Decimal(taxed.line.total).gt(MAX_SALE_AMOUNT)) return fail(`detalles.${index}.cantidad`, `El total de la línea supera el máximo de ${MAX_SALE_AMOUNT}`);
    lines.push({
      ...taxed.line,
      index,
      producto,
      id_presentacion: input.id_presentacion ?? null,
      costo: producto.costo_promedio,
      mueve_stock: producto.tipo === 'Producto',
    });
  });

  const totals = saleTotals(lines);
  if (lines.length === req.detalles.length && new Decimal(totals.total).gt(MAX_SALE_AMOUNT)) {
    fail('detalles', `El total de la venta supera el máximo de ${MAX_SALE_AMOUNT}`);
  }
  if (Object.keys(details).length > 0) return { ok: false, details };

  const sucursal = (found.sucursal as { ok: true; value: { id: number; nombre: string } }).value;
  const bodega = (found.bodega as { ok: true; value: { id: number; nombre: string } }).value;
  return {
    ok: true,
    plan: {
      empresaId: ctx.empresa.id,
      referencia: req.referencia_externa ?? req.referencia ?? null,
      estado,
      cotizacion: estado === 'Cotizacion',
      sucursal: { id: sucursal.id, nombre: sucursal.nombre },
      bodega: { id: bodega.id, nombre: bodega.nombre },
      documento: found.documento!,
      canal: found.canal ? { id: found.canal.id, nombre: found.canal.nombre } : null,
      cliente: found.cliente ? { id: found.cliente.id, nombre: found.cliente.nombre, limite_credito: found.cliente.limite_credito } : null,
      usuario: ctx.usuario!,
      lines,
      totals,
      payment: payment(req.estado, totals.total, req.monto_pago !== undefined ? fromNumber(req.monto_pago) : undefined, req.cambio !== undefined ? fromNumber(req.cambio) : undefined),
      stockLines: takesStock(estado) ? lines.filter((l) => l.mueve_stock) : [],
    },
  };
}

/** Name shown for a sale without a customer. */
export const CONSUMIDOR_FINAL = 'Consumidor Final';

/**
 * The sale document: an immutable snapshot of the sale as issued (company, document type,
 * correlative, parties, lines and tax breakdown), stored with the sale and never updated.
 */
export function saleDocument(plan: SalePlan, req: SaleCreateRequest, ctx: TenantContext, issued: { correlativo: string; numero: number; emitido_en: string }) {
  return {
    version: 1,
    emitido_en: issued.emitido_en,
    empresa: { id: ctx.empresa.id, nombre: ctx.empresa.nombre },
    documento: { id: plan.documento.id, nombre: plan.documento.nombre, prefijo: plan.documento.prefijo, numero: issued.numero, correlativo: issued.correlativo },
    fecha: req.fecha,
    fecha_expiracion: req.fecha_expiracion ?? null,
    estado: plan.estado,
    cotizacion: plan.cotizacion,
    sucursal: plan.sucursal,
    bodega: plan.bodega,
    canal: plan.canal,
    cliente: plan.cliente ? { id: plan.cliente.id, nombre: plan.cliente.nombre } : { id: null, nombre: CONSUMIDOR_FINAL },
    usuario: plan.usuario,
    referencia_externa: plan.referencia,
    forma_pago: req.forma_pago ?? 'Efectivo',
    observaciones: req.observaciones ?? null,
    lineas: plan.lines.map((l) => ({
      id_producto: l.producto.id,
      codigo: l.producto.codigo,
      nombre: l.producto.nombre,
      cantidad: l.cantidad,
      precio: l.precio,
      descuento: l.descuento,
      porcentaje_impuesto: l.porcentaje_impuesto,
      sub_total: l.sub_total,
      iva: l.iva,
      exenta: l.exenta,
      total: l.total,
    })),
    totales: plan.totals,
    pago: plan.payment,
  };
}
