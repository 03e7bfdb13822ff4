import type { SaleInput, TenantContext } from '@erp/contracts';
import { runVentaPipeline, type CreateVentaDeps, type CreateVentaRequest } from './venta-pipeline.flow';

/**
 * `POST /sales`, platform orders and the fixture loader: the invoicing pipeline
 * (`runVentaPipeline`) over one sale; what refuses it is thrown.
 */
export async function createVenta(
  deps: CreateVentaDeps,
  req: CreateVentaRequest,
  ctx: TenantContext,
): Promise<{ venta: SaleInput; idempotent: boolean }> {
  const outcome = (await runVentaPipeline(deps, [req], ctx))[0]!;
  if ('error' in outcome) throw outcome.error;
  return outcome;
}
