import type { SaleInput } from '@erp/contracts';
import type { VentasTable } from '../db/tables';
import { CONSUMIDOR_FINAL, type PlannedLine, type VentaDraft, type VentaPlan } from './venta-plan';

/**
 * The columns of a sale that follow from its plan, as creation and update both store them; each
 * adds what only it decides (the number and reference, the issuing type and stock revision).
 */
export function plannedVentaColumns(plan: VentaPlan, draft: VentaDraft) {
  return {
    sucursal_id: plan.sucursal.id,
    bodega_id: plan.bodega.id,
    documento_id: plan.documento.id,
    canal_id: plan.canal?.id ?? null,
    cliente_id: plan.cliente?.id ?? null,
    fecha: draft.fecha,
    estado: plan.estado,
    cotizacion: plan.cotizacion,
    forma_pago: draft.forma_pago,
    observaciones: draft.observaciones,
    monto_pago: plan.payment.monto_pago,
    cambio: plan.payment.cambio,
    fecha_expiracion: draft.fecha_expiracion,
    ...plan.totals,
    saldo: plan.payment.saldo,
    nombre_cliente: plan.cliente?.nombre ?? CONSUMIDOR_FINAL,
  };
}

/** A sale as reads select it (`VENTA_COLUMNS`), before its lines are added. */
export type VentaRow = Pick<
  VentasTable,
  | 'fecha'
  | 'correlativo'
  | 'referencia_externa'
  | 'cotizacion'
  | 'estado'
  | 'forma_pago'
  | 'total'
  | 'iva'
  | 'sub_total'
  | 'descuento'
  | 'exenta'
  | 'monto_pago'
  | 'cambio'
  | 'saldo'
  | 'nombre_cliente'
  | 'nombre_usuario'
  | 'nombre_vendedor'
  | 'sucursal_id'
  | 'bodega_id'
  | 'documento_id'
  | 'nombre_documento'
  | 'canal_id'
  | 'cliente_id'
  | 'fecha_expiracion'
  | 'observaciones'
> & {
  id: number;
  documento_fiscal_emitido: boolean;
  created_at: Date;
  updated_at: Date;
};

/** The stored columns of a planned line, as creation and update both write them. */
export function detalleColumns(line: PlannedLine, empresaId: number) {
  return {
    empresa_id: empresaId,
    linea: line.index,
    id_producto: line.producto.id,
    codigo: line.producto.codigo,
    nombre_producto: line.producto.nombre,
    descripcion: line.producto.descripcion,
    mueve_stock: line.mueve_stock,
    id_presentacion: line.id_presentacion,
    cantidad: line.cantidad,
    precio: line.precio,
    descuento: line.descuento,
    porcentaje_impuesto: line.porcentaje_impuesto,
    sub_total: line.sub_total,
    iva: line.iva,
    total: line.total,
    exenta: line.exenta,
    costo: line.costo,
  };
}

export function toVenta(row: VentaRow, detalles: SaleInput['detalles']): SaleInput {
  return {
    id: row.id,
    fecha: row.fecha,
    correlativo: row.correlativo,
    referencia: row.referencia_externa,
    referencia_externa: row.referencia_externa,
    cotizacion: row.cotizacion,
    estado: row.estado,
    forma_pago: row.forma_pago,
    total: row.total,
    iva: row.iva,
    sub_total: row.sub_total,
    descuento: row.descuento,
    exenta: row.exenta,
    monto_pago: row.monto_pago,
    cambio: row.cambio,
    saldo: row.saldo,
    nombre_cliente: row.nombre_cliente,
    nombre_usuario: row.nombre_usuario,
    nombre_vendedor: row.nombre_vendedor,
    id_sucursal: row.sucursal_id,
    id_bodega: row.bodega_id,
    id_documento: row.documento_id,
    nombre_documento: row.nombre_documento,
    id_canal: row.canal_id,
    id_cliente: row.cliente_id,
    fecha_expiracion: row.fecha_expiracion,
    observaciones: row.observaciones,
    documento_fiscal_emitido: row.documento_fiscal_emitido,
    created_at: row.created_at,
    updated_at: row.updated_at,
    detalles,
  };
}
