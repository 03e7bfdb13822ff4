import { CONSUMIDOR_FINAL, type SaleDraft, type SalePlan } from './sale-plan';

/**
 * The columns of a sale that follow from its plan, as creation and update both store them; each
 * adds what only it decides (the number and reference, the issuing type and stock revision).
 */
export function plannedVentaColumns(plan: SalePlan, draft: SaleDraft) {
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
