import { ESTADOS_VENTA_EDITABLES, type EstadoVenta, type EstadoVentaCreacion, type SaleUpdateBody } from '@erp/contracts';
import { Decimal, fromNumber } from '@erp/contracts';
import type { DraftLine, VentaDraft } from './venta-plan';

/** A stored line, as an update reads it. Decimals are exact strings. */
export interface StoredLine {
  id: number;
  id_producto: number;
  cantidad: string;
  precio: string;
  descuento: string;
  porcentaje_impuesto: string;
  id_presentacion: number | null;
  mueve_stock: boolean;
}

/** The stored sale an update starts from, read under its row lock. */
export interface StoredVenta {
  id: number;
  estado: EstadoVenta;
  documento_fiscal_emitido: boolean;
  referencia_externa: string | null;
  fecha: string;
  fecha_expiracion: string | null;
  forma_pago: string | null;
  observaciones: string | null;
  sucursal_id: number;
  bodega_id: number;
  documento_id: number;
  documento_emisor_id: number | null;
  canal_id: number | null;
  cliente_id: number | null;
  usuario_id: number | null;
  nombre_usuario: string | null;
  monto_pago: string | null;
  cambio: string;
  saldo: string;
  revision_stock: number;
  /** Active returns of the sale (kept by the consumer of the returns service's events). */
  devoluciones_activas: number;
  lines: StoredLine[];
}

/** Why the sale cannot be updated at all (with the field it is about), or undefined when it can. */
export function updateRefusal(
  venta: Pick<StoredVenta, 'estado' | 'documento_fiscal_emitido' | 'devoluciones_activas'>,
): { field: string; message: string } | undefined {
  if (venta.estado === 'Anulada') return { field: 'estado', message: 'La venta está anulada y no se puede modificar' };
  if (venta.documento_fiscal_emitido)
    return { field: 'documento_fiscal_emitido', message: 'La venta tiene un documento fiscal emitido y no se puede modificar' };
  if (!(ESTADOS_VENTA_EDITABLES as readonly string[]).includes(venta.estado)) {
    return {
      field: 'estado',
      message: `La venta está en estado ${venta.estado}: solo se pueden modificar ventas en estado Pendiente o Cotizacion`,
    };
  }
  // Its returns gave back stock of its lines: changing those lines would count that stock twice.
  if (venta.devoluciones_activas > 0) return { field: 'detalles', message: 'La venta tiene devoluciones activas y no se puede modificar' };
  return undefined;
}

/** Records a problem of a field of the change. */
type Fail = (field: string, message: string) => void;

export type MergeResult = { ok: true; draft: VentaDraft } | { ok: false; details: Record<string, string[]> };

/**
 * The sale as it would be after the change: every omitted field keeps its stored value; `detalles`,
 * when sent, replaces the lines (a line with the `id` of a line of this sale updates it in place,
 * keeping what it omits; a line without `id` is new; lines not sent go). An `id` that is not a
 * line of this sale is refused, never looked up elsewhere. The rules between fields are checked on
 * the result, as on creation. `Pre-venta` is a quotation.
 */
export function mergeUpdate(venta: StoredVenta, changes: SaleUpdateBody, actingUser: { id: number; nombre: string } | null): MergeResult {
  const details: Record<string, string[]> = {};
  const fail: Fail = (field, message) => void (details[field] ??= []).push(message);

  const ruled = mergeRuledFields(venta, changes);
  checkFieldRules(ruled, changes, fail);
  const detalles = changes.detalles ? mergeDetalles(venta.lines, changes.detalles, fail) : venta.lines.map(keptLine);
  if (Object.keys(details).length > 0) return { ok: false, details };

  return {
    ok: true,
    draft: {
      estado: ruled.estado,
      referencia: venta.referencia_externa,
      fecha: ruled.fecha,
      fecha_expiracion: ruled.fecha_expiracion,
      forma_pago: changes.forma_pago !== undefined ? changes.forma_pago : venta.forma_pago,
      observaciones: changes.observaciones !== undefined ? changes.observaciones : venta.observaciones,
      sucursal: mergeSucursal(venta, changes),
      id_bodega: changes.id_bodega ?? venta.bodega_id,
      id_documento: changes.id_documento ?? venta.documento_id,
      id_canal: ruled.id_canal,
      id_cliente: ruled.id_cliente,
      ...mergePago(venta, changes, ruled.estado),
      usuario:
        venta.usuario_id !== null && venta.nombre_usuario !== null ? { id: venta.usuario_id, nombre: venta.nombre_usuario } : actingUser,
      detalles,
    },
  };
}

/** The merged fields the rules between fields read. */
type RuledFields = Pick<VentaDraft, 'estado' | 'fecha' | 'fecha_expiracion' | 'id_canal' | 'id_cliente'>;

function mergeRuledFields(venta: StoredVenta, changes: SaleUpdateBody): RuledFields {
  return {
    estado:
      changes.estado === undefined
        ? (venta.estado as 'Pendiente' | 'Cotizacion')
        : changes.estado === 'Pre-venta'
          ? 'Cotizacion'
          : changes.estado,
    fecha: changes.fecha ?? venta.fecha,
    fecha_expiracion: changes.fecha_expiracion !== undefined ? changes.fecha_expiracion : venta.fecha_expiracion,
    id_canal: changes.id_canal ?? venta.canal_id,
    id_cliente: changes.id_cliente !== undefined ? changes.id_cliente : venta.cliente_id,
  };
}

/** The rules between fields, on the sale as merged; a problem is told on the field the change sent when it can be. */
function checkFieldRules(ruled: RuledFields, changes: SaleUpdateBody, fail: Fail): void {
  const { estado, fecha, fecha_expiracion: fechaExpiracion, id_canal: canal, id_cliente: cliente } = ruled;
  if (estado !== 'Cotizacion' && canal === null) fail('id_canal', 'Es obligatorio salvo cuando el estado es Cotizacion');
  if (estado === 'Pendiente' && cliente === null) fail('id_cliente', 'Es obligatorio cuando el estado es Pendiente');
  if (changes.cotizacion === true && estado !== 'Cotizacion') fail('cotizacion', 'Solo puede ser true cuando el estado es Cotizacion');
  if (fechaExpiracion !== null && fechaExpiracion < fecha)
    fail(
      changes.fecha_expiracion !== undefined ? 'fecha_expiracion' : 'fecha',
      `La fecha de expiración (${fechaExpiracion}) no puede ser anterior a la fecha (${fecha})`,
    );
}

type SentLine = NonNullable<SaleUpdateBody['detalles']>[number];

/** The lines sent, each merged with the stored line its `id` names; an `id` of no line of this sale is refused. */
function mergeDetalles(stored: readonly StoredLine[], sent: readonly SentLine[], fail: Fail): DraftLine[] {
  const byId = new Map(stored.map((l) => [l.id, l]));
  return sent.flatMap((input, index) => {
    const line = input.id !== undefined ? byId.get(input.id) : undefined;
    if (input.id !== undefined && !line) {
      fail(`detalles.${index}.id`, `La línea ${input.id} no pertenece a esta venta`);
      return [];
    }
    return [mergeLine(input, line ? keptLine(line) : undefined)];
  });
}

/** A stored line kept as it is. */
function keptLine(stored: StoredLine): DraftLine {
  return {
    id: stored.id,
    producto: { id_producto: stored.id_producto },
    cantidad: stored.cantidad,
    descuento: stored.descuento,
    kept: {
      id_producto: stored.id_producto,
      precio: stored.precio,
      porcentaje_impuesto: stored.porcentaje_impuesto,
      id_presentacion: stored.id_presentacion,
    },
  };
}

/** A line sent: new without `base`, else an update of the stored line `base` keeps, which fills what the line omits. */
function mergeLine(input: SentLine, base: DraftLine | undefined): DraftLine {
  const producto =
    input.id_producto !== undefined
      ? { id_producto: input.id_producto }
      : input.codigo_producto !== undefined
        ? { codigo: input.codigo_producto }
        : base!.producto;
  return {
    ...(base ? { id: base.id, kept: base.kept } : {}),
    producto,
    cantidad: fromNumber(input.cantidad),
    precio: input.precio !== undefined ? fromNumber(input.precio) : undefined,
    descuento: input.descuento !== undefined ? fromNumber(input.descuento) : (base?.descuento ?? '0'),
    porcentaje_impuesto: input.porcentaje_impuesto !== undefined ? fromNumber(input.porcentaje_impuesto) : undefined,
    id_presentacion: input.id_presentacion,
  };
}

/** The branch sent, by id or by name, else the stored one. */
function mergeSucursal(venta: StoredVenta, changes: SaleUpdateBody): VentaDraft['sucursal'] {
  if (changes.id_sucursal !== undefined) return { id_sucursal: changes.id_sucursal };
  if (changes.sucursal !== undefined) return { sucursal: changes.sucursal };
  return { id_sucursal: venta.sucursal_id };
}

/** The payment as merged: a sent amount replaces the stored one, and null clears it. */
function mergePago(venta: StoredVenta, changes: SaleUpdateBody, estado: EstadoVentaCreacion): Pick<VentaDraft, 'monto_pago' | 'cambio'> {
  return {
    // `Pagada` means paid in full: without an amount sent, monto_pago becomes the total again.
    monto_pago:
      changes.monto_pago !== undefined
        ? changes.monto_pago === null
          ? undefined
          : fromNumber(changes.monto_pago)
        : estado === 'Pagada'
          ? undefined
          : (venta.monto_pago ?? undefined),
    cambio: changes.cambio === undefined ? venta.cambio : changes.cambio === null ? undefined : fromNumber(changes.cambio),
  };
}

/**
 * Whether the customer's credit limit must be checked: when the sale becomes Pendiente, changes
 * customer while Pendiente, or owes more than it did. Lowering what a customer owes is never refused.
 */
export function needsCreditCheck(
  before: Pick<StoredVenta, 'estado' | 'cliente_id' | 'saldo'>,
  after: { estado: EstadoVenta; cliente_id: number | null; saldo: string },
): boolean {
  if (after.estado !== 'Pendiente' || after.cliente_id === null) return false;
  if (before.estado !== 'Pendiente' || before.cliente_id !== after.cliente_id) return true;
  return new Decimal(after.saldo).gt(before.saldo);
}

/**
 * The document type that issued the sale's number after the update: the correlative never
 * changes, so a sale moved to another type remembers the one whose counter issued it (null while
 * it is on that type).
 */
export function documentoEmisor(venta: Pick<StoredVenta, 'documento_id' | 'documento_emisor_id'>, nuevoDocumentoId: number): number | null {
  const emisor = venta.documento_emisor_id ?? venta.documento_id;
  return emisor === nuevoDocumentoId ? null : emisor;
}
