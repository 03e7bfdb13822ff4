import type { EstadoVentaCreacion, Reason, ResolvedProduct, SaleCreateRequest, TenantContext } from '@erp/contracts';
import { MAX_SALE_AMOUNT } from '@erp/contracts';
import { Decimal, fromNumber } from '@erp/contracts';
import { documentoProblem, payment, storedEstado, takesStock, type DocumentoRow, type Payment } from './venta-rules';
import { resolveRate, ventaTotals, taxLine, type VentaTotals, type TaxedLine } from './tax';

export type Resolution<T> = { ok: true; value: T } | { ok: false; message: string };

/** What the pipeline found for a request before anything is written. */
export interface VentaResolutions {
  sucursal: Resolution<{ id: number; nombre: string }>;
  bodega: Resolution<{ id: number; nombre: string; id_sucursal: number }>;
  productos: Array<Resolution<ResolvedProduct>>;
  documento: DocumentoRow | undefined;
  canal: { id: number; nombre: string; activo: boolean } | undefined;
  cliente: { id: number; nombre: string; limite_credito: string; activo: boolean } | undefined;
}

/** A product as a line names it: by id, or by code (or barcode). */
export type ProductRef = { id_producto: number } | { codigo: string };

/** One line of a sale to plan. Amounts are exact decimal strings. */
export interface DraftLine {
  /** The line of the sale it updates in place (updates only). */
  id?: number;
  producto: ProductRef;
  cantidad: string;
  /** Unit price including tax; the product's (or the kept line's) when absent. */
  precio?: string;
  descuento: string;
  /** The line's own rate; the product's, else the company's, when absent. */
  porcentaje_impuesto?: string;
  /** Absent: the kept line's while it keeps its product, else none. */
  id_presentacion?: number | null;
  /**
   * The stored line an update keeps: while the line keeps its product, an omitted `precio`,
   * `porcentaje_impuesto` or `id_presentacion` keeps the stored one instead of the product's.
   */
  kept?: { id_producto: number; precio: string; porcentaje_impuesto: string; id_presentacion: number | null };
}

/**
 * What a sale should be, whoever asks: `POST /sales` from its request, `PUT /sales/{id}` from the
 * stored sale with the changes sent. The same plan, tax and checks apply to both.
 */
export interface VentaDraft {
  /** As accepted on create: `Pagada` is a `Completada` paid in full. */
  estado: EstadoVentaCreacion;
  referencia: string | null;
  fecha: string;
  fecha_expiracion: string | null;
  forma_pago: string | null;
  observaciones: string | null;
  sucursal: { id_sucursal: number } | { sucursal: string };
  id_bodega: number;
  id_documento: number;
  id_canal: number | null;
  id_cliente: number | null;
  monto_pago?: string;
  cambio?: string;
  /** The acting user (create) or the user the sale was issued by (update). */
  usuario: { id: number; nombre: string } | null;
  detalles: DraftLine[];
}

export interface PlannedLine extends TaxedLine {
  /** Position in `detalles`. */
  index: number;
  /** The stored line it updates in place, if any. */
  lineId: number | null;
  producto: ResolvedProduct;
  id_presentacion: number | null;
  costo: string;
  mueve_stock: boolean;
}

export interface VentaPlan {
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
  totals: VentaTotals;
  payment: Payment;
  /** Lines whose stock the sale takes (none for quotations and services). */
  stockLines: PlannedLine[];
}

/** A refused plan names every problem by field, and the reason of the first. */
export type PlanResult = { ok: true; plan: VentaPlan } | { ok: false; details: Record<string, string[]>; reason: Reason };

/** The draft of `POST /sales`: JSON numbers become the exact decimals they were written as. */
export function createDraft(req: SaleCreateRequest, ctx: TenantContext): VentaDraft {
  return {
    estado: req.estado,
    referencia: req.referencia_externa ?? req.referencia ?? null,
    fecha: req.fecha,
    fecha_expiracion: req.fecha_expiracion ?? null,
    forma_pago: req.forma_pago ?? 'Efectivo',
    observaciones: req.observaciones ?? null,
    sucursal: req.id_sucursal !== undefined ? { id_sucursal: req.id_sucursal } : { sucursal: req.sucursal! },
    id_bodega: req.id_bodega,
    id_documento: req.id_documento,
    id_canal: req.id_canal ?? null,
    id_cliente: req.id_cliente ?? null,
    monto_pago: req.monto_pago !== undefined ? fromNumber(req.monto_pago) : undefined,
    cambio: req.cambio !== undefined ? fromNumber(req.cambio) : undefined,
    usuario: ctx.usuario ?? null,
    detalles: req.detalles.map((d) => ({
      producto: d.id_producto !== undefined ? { id_producto: d.id_producto } : { codigo: d.codigo_producto! },
      cantidad: fromNumber(d.cantidad),
      precio: d.precio !== undefined ? fromNumber(d.precio) : undefined,
      descuento: d.descuento !== undefined ? fromNumber(d.descuento) : '0',
      porcentaje_impuesto: d.porcentaje_impuesto !== undefined ? fromNumber(d.porcentaje_impuesto) : undefined,
      id_presentacion: d.id_presentacion ?? null,
    })),
  };
}

/** Plans the sale of a `POST /sales` request. */
export function planVenta(req: SaleCreateRequest, ctx: TenantContext, found: VentaResolutions): PlanResult {
  return planDraft(createDraft(req, ctx), ctx, found);
}

/** Records a problem of a field; the first problem recorded gives the refusal its reason. */
type Fail = (field: string, message: string, why?: Reason) => void;

/**
 * Checks everything the draft points to and computes the lines, the totals and the payment.
 * Pure: the caller resolves the references first; every problem is reported at once, by field.
 */
export function planDraft(draft: VentaDraft, ctx: TenantContext, found: VentaResolutions): PlanResult {
  const details: Record<string, string[]> = {};
  let reason: Reason | undefined;
  const fail: Fail = (field, message, why = 'dato_relacionado_invalido') => {
    reason ??= why;
    (details[field] ??= []).push(message);
  };
  const estado = storedEstado(draft.estado);

  const sucursal = checkSucursalBodega(draft, found, fail);
  const docProblem = documentoProblem(found.documento, draft.id_documento, sucursal?.id, estado);
  if (docProblem) fail('id_documento', docProblem);
  checkParties(draft, found, fail);

  const lines = planLines(draft, found.productos, ctx.empresa.iva, fail);
  const totals = ventaTotals(lines);
  // The sale's total is only weighed when every line could be priced.
  if (lines.length === draft.detalles.length && new Decimal(totals.total).gt(MAX_SALE_AMOUNT)) {
    fail('detalles', `El total de la venta supera el máximo de ${MAX_SALE_AMOUNT}`, 'importe_invalido');
  }
  if (reason) return { ok: false, details, reason };
  return { ok: true, plan: acceptedPlan(draft, ctx, found, estado, lines, totals) };
}

/** Checks the branch, and that the warehouse belongs to it; returns the branch when it was found. */
function checkSucursalBodega(draft: VentaDraft, found: VentaResolutions, fail: Fail): { id: number; nombre: string } | undefined {
  const sucursal = found.sucursal.ok ? found.sucursal.value : undefined;
  if (!found.sucursal.ok) fail('id_sucursal' in draft.sucursal ? 'id_sucursal' : 'sucursal', found.sucursal.message);
  if (!found.bodega.ok) fail('id_bodega', found.bodega.message);
  else if (sucursal && found.bodega.value.id_sucursal !== sucursal.id) {
    fail('id_bodega', `La bodega ${draft.id_bodega} no pertenece a la sucursal ${sucursal.nombre}`);
  }
  return sucursal;
}

/** Checks the channel and the customer the draft names (they exist and are active), and that someone issues it. */
function checkParties(draft: VentaDraft, found: VentaResolutions, fail: Fail): void {
  if (draft.id_canal !== null) {
    if (!found.canal) fail('id_canal', `El canal ${draft.id_canal} no existe`);
    else if (!found.canal.activo) fail('id_canal', `El canal "${found.canal.nombre}" está inactivo`);
  }
  if (draft.id_cliente !== null) {
    if (!found.cliente) fail('id_cliente', `El cliente ${draft.id_cliente} no existe`);
    else if (!found.cliente.activo) fail('id_cliente', `El cliente "${found.cliente.nombre}" está inactivo`);
  }
  if (!draft.usuario)
    fail(
      'usuario',
      'La empresa no tiene un usuario activo: asocie la API key a un usuario o active un usuario administrador',
      'sin_usuario_activo',
    );
}

/** The lines that could be planned, in order; each line that could not is reported instead. */
function planLines(draft: VentaDraft, productos: VentaResolutions['productos'], iva: string, fail: Fail): PlannedLine[] {
  return draft.detalles.flatMap((input, index) => planLine(input, index, productos[index], iva, fail) ?? []);
}

/** One line: its product, then its amounts at its rate. `iva` is the company's rate. */
function planLine(
  input: DraftLine,
  index: number,
  resolved: Resolution<ResolvedProduct> | undefined,
  iva: string,
  fail: Fail,
): PlannedLine | undefined {
  const producto = activeProducto(input, index, resolved, fail);
  if (!producto) return undefined;
  const kept = input.kept && input.kept.id_producto === producto.id ? input.kept : undefined;
  const taxed = taxedLine(input, index, producto, kept, iva, fail);
  if (!taxed) return undefined;
  return {
    ...taxed,
    index,
    lineId: input.id ?? null,
    producto,
    id_presentacion: input.id_presentacion !== undefined ? input.id_presentacion : (kept?.id_presentacion ?? null),
    costo: producto.costo_promedio,
    mueve_stock: producto.tipo === 'Producto',
  };
}

/** The line's product, when it was found and is active. */
function activeProducto(
  input: DraftLine,
  index: number,
  resolved: Resolution<ResolvedProduct> | undefined,
  fail: Fail,
): ResolvedProduct | undefined {
  const field = 'id_producto' in input.producto ? `detalles.${index}.id_producto` : `detalles.${index}.codigo_producto`;
  if (!resolved || !resolved.ok) {
    fail(field, resolved?.message ?? 'El producto no existe', 'producto_no_encontrado');
    return undefined;
  }
  if (resolved.value.enable !== 1) {
    fail(field, `El producto ${resolved.value.codigo} está inactivo`, 'producto_no_encontrado');
    return undefined;
  }
  return resolved.value;
}

/**
 * The line's amounts, within the sale maximum. Price and rate are the line's, else the kept line's
 * (an update that keeps the product), else the product's; the rate falls back to the company's `iva`.
 */
function taxedLine(
  input: DraftLine,
  index: number,
  producto: ResolvedProduct,
  kept: DraftLine['kept'],
  iva: string,
  fail: Fail,
): TaxedLine | undefined {
  const taxed = taxLine({
    cantidad: input.cantidad,
    precio: input.precio ?? kept?.precio ?? producto.precio,
    descuento: input.descuento,
    porcentaje_impuesto: resolveRate(input.porcentaje_impuesto ?? kept?.porcentaje_impuesto, producto.porcentaje_impuesto, iva),
  });
  if (!taxed.ok) {
    fail(`detalles.${index}.${taxed.field}`, taxed.message, 'importe_invalido');
    return undefined;
  }
  if (new Decimal(taxed.line.total).gt(MAX_SALE_AMOUNT)) {
    fail(`detalles.${index}.cantidad`, `El total de la línea supera el máximo de ${MAX_SALE_AMOUNT}`, 'importe_invalido');
    return undefined;
  }
  return taxed.line;
}

/** The plan of a draft without problems: every reference it names was found. */
function acceptedPlan(
  draft: VentaDraft,
  ctx: TenantContext,
  found: VentaResolutions,
  estado: VentaPlan['estado'],
  lines: PlannedLine[],
  totals: VentaTotals,
): VentaPlan {
  const sucursal = (found.sucursal as { ok: true; value: { id: number; nombre: string } }).value;
  const bodega = (found.bodega as { ok: true; value: { id: number; nombre: string } }).value;
  return {
    empresaId: ctx.empresa.id,
    referencia: draft.referencia,
    estado,
    cotizacion: estado === 'Cotizacion',
    sucursal: { id: sucursal.id, nombre: sucursal.nombre },
    bodega: { id: bodega.id, nombre: bodega.nombre },
    documento: found.documento!,
    canal: found.canal ? { id: found.canal.id, nombre: found.canal.nombre } : null,
    cliente: found.cliente ? { id: found.cliente.id, nombre: found.cliente.nombre, limite_credito: found.cliente.limite_credito } : null,
    usuario: draft.usuario!,
    lines,
    totals,
    payment: payment(draft.estado, totals.total, draft.monto_pago, draft.cambio),
    stockLines: takesStock(estado) ? lines.filter((l) => l.mueve_stock) : [],
  };
}

/** Name shown for a sale without a customer. */
export const CONSUMIDOR_FINAL = 'Consumidor Final';

/**
 * The sale document: an immutable snapshot of the sale as issued (company, document type,
 * correlative, parties, lines and tax breakdown), stored with the sale and never updated.
 */
export function ventaDocument(
  plan: VentaPlan,
  draft: VentaDraft,
  ctx: TenantContext,
  issued: { correlativo: string; numero: number; emitido_en: string; actualizado_en?: string },
) {
  return {
    version: 1,
    emitido_en: issued.emitido_en,
    /** When an update issued the document again (same correlative); null as first issued. */
    actualizado_en: issued.actualizado_en ?? null,
    empresa: { id: ctx.empresa.id, nombre: ctx.empresa.nombre },
    documento: {
      id: plan.documento.id,
      nombre: plan.documento.nombre,
      prefijo: plan.documento.prefijo,
      numero: issued.numero,
      correlativo: issued.correlativo,
    },
    fecha: draft.fecha,
    fecha_expiracion: draft.fecha_expiracion,
    estado: plan.estado,
    cotizacion: plan.cotizacion,
    sucursal: plan.sucursal,
    bodega: plan.bodega,
    canal: plan.canal,
    cliente: plan.cliente ? { id: plan.cliente.id, nombre: plan.cliente.nombre } : { id: null, nombre: CONSUMIDOR_FINAL },
    usuario: plan.usuario,
    referencia_externa: plan.referencia,
    forma_pago: draft.forma_pago,
    observaciones: draft.observaciones,
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
