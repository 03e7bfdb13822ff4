import type { Insertable } from 'kysely';
import {
  MEDIDA_UNIDAD,
  type ParsedRequestOf,
  type ReturnInput,
  type ReturnableSale,
  type TipoDevolucion,
  type returnsAdminSubjects,
} from '@erp/contracts';
import type { DevolucionDetallesTable, DevolucionesTable } from '../db/tables';
import type { PlannedLine, ReturnPlan } from './return-plan';

type CreateRequest = ParsedRequestOf<typeof returnsAdminSubjects, 'returns.admin.create'>;

/** Who made a back-office return when the request names nobody. */
export const BACK_OFFICE_USER = 'Administración';

/**
 * The columns of a new return, as `createDevolucion` writes them but for its timestamps: the sale as
 * it was registered, the number the document's series gave it, what the request says and its
 * plan's totals. The return's key registers it with the sale, and is its stock key when it puts
 * stock back.
 */
export function devolucionColumns(source: {
  empresaId: number;
  venta: Pick<ReturnableSale, 'id' | 'id_bodega' | 'nombre_cliente'>;
  documento: { id: number; nombre: string; prefijo: string; correlativo: number };
  request: Pick<CreateRequest, 'fecha' | 'tipo' | 'referencia' | 'observaciones' | 'usuario'>;
  plan: ReturnPlan;
  clave: string;
}): Omit<Insertable<DevolucionesTable>, 'created_at' | 'updated_at'> {
  const { empresaId, venta, documento, request, plan, clave } = source;
  return {
    empresa_id: empresaId,
    venta_id: venta.id,
    bodega_id: venta.id_bodega,
    documento_id: documento.id,
    numero: documento.correlativo,
    correlativo: `${documento.prefijo}${documento.correlativo}`,
    fecha: request.fecha,
    tipo: request.tipo,
    referencia: request.referencia ?? null,
    observaciones: request.observaciones ?? null,
    ...plan.totals,
    anulada_at: null,
    usuario_id: request.usuario?.id ?? null,
    nombre_usuario: request.usuario?.nombre ?? BACK_OFFICE_USER,
    nombre_cliente: venta.nombre_cliente ?? 'Consumidor Final',
    nombre_documento: documento.nombre,
    clave_stock: plan.stock.length > 0 ? clave : null,
    clave_registro: clave,
    stock_aplicado_at: null,
    stock_revertido_at: null,
  };
}

/**
 * The stored columns of a planned line at position `linea`, as `createDevolucion` writes them but for
 * the return's id and the timestamps; `marca` is inventory's (the sale's lines do not keep it).
 */
export function detalleColumns(
  line: PlannedLine,
  linea: number,
  empresaId: number,
  marca: string | undefined,
): Omit<Insertable<DevolucionDetallesTable>, 'devolucion_id' | 'created_at' | 'updated_at'> {
  return {
    empresa_id: empresaId,
    linea,
    venta_detalle_id: line.detalleVenta.id,
    id_producto: line.detalleVenta.id_producto,
    codigo_producto: line.detalleVenta.codigo ?? '',
    nombre_producto: line.detalleVenta.nombre_producto ?? '',
    marca_producto: marca ?? '',
    descripcion: line.detalleVenta.descripcion ?? '',
    medida: MEDIDA_UNIDAD,
    mueve_stock: line.mueve_stock,
    cantidad: line.cantidad,
    precio: line.precio,
    costo: line.costo,
    descuento: line.descuento,
    porcentaje_impuesto: line.porcentaje_impuesto,
    sub_total: line.sub_total,
    iva: line.iva,
    total: line.total,
    exenta: line.exenta,
  };
}

/** A return as reads select it (`DEVOLUCION_COLUMNS`), before its lines are added. */
export interface DevolucionRow {
  id: number;
  fecha: string;
  correlativo: string;
  tipo: TipoDevolucion;
  sub_total: string;
  no_sujeta: string;
  exenta: string;
  cuenta_a_terceros: string;
  total: string;
  iva: string;
  iva_retenido: string;
  descuento: string;
  observaciones: string | null;
  enable: boolean;
  venta_id: number;
  nombre_cliente: string;
  nombre_usuario: string;
  nombre_documento: string;
  created_at: Date;
  updated_at: Date;
}

export function toDevolucion({ venta_id, enable, observaciones, ...row }: DevolucionRow, detalles: ReturnInput['detalles']): ReturnInput {
  return {
    ...row,
    observaciones: observaciones ?? '',
    enable: enable ? 1 : 0,
    estado: enable ? 'Confirmada' : 'Anulada',
    id_venta: venta_id,
    detalles,
  };
}
