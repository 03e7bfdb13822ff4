import { crash } from '@erp/runtime';
import type { FaultInjection } from './config';
import type { CreateStageHooks } from './flows/venta-pipeline.flow';
import type { UpdateVentaDeps } from './flows/update-venta.flow';

/**
 * The chaos tests' fault points (`SALES_FAULT_INJECTION`) as the flows' stage hooks: the process
 * dies (`crash`, as a `kill -9` would) right after the stage the setting names. Off, no hook is
 * set and the flows run as in production.
 */
export function faultHooks(fault: FaultInjection): { create: CreateStageHooks; update: Pick<UpdateVentaDeps, 'afterAdjust'> } {
  return {
    create: {
      ...(fault === 'exit-after-reserve' ? { reserved: crash } : {}),
      ...(fault === 'exit-after-commit' ? { committed: crash } : {}),
    },
    update: fault === 'exit-after-update-adjust' ? { afterAdjust: crash } : {},
  };
}
