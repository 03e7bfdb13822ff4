import { AppError, type PasadaConciliacion } from '@erp/contracts';
import { startPeriodic, type Worker } from '@erp/runtime';
import { claimPasses, duePassesNow, type ClaimedPass } from '../db/conciliacion.repository';
import { reconcileIntegracion, type ReconcileDeps } from '../flows/reconcile.flow';

/** The reconciliation worker, which also runs a pass when the back office asks for one. */
export interface Reconciler extends Worker {
  /** One pass now of the integration named, or of every one with a shop API; `ocupada` where another replica holds it. */
  runNow(integracionId?: number): Promise<PasadaConciliacion[]>;
}

/**
 * Runs the passes that are due, each under its lease, up to `concurrency` at once: every pass
 * runs on its own, so one shop that is slow or failing never holds back another's. A replica
 * that dies keeps its leases only until they lapse; another replica then takes them. When the
 * service starts, every integration's pass is due at once (whatever it missed while down is read now).
 */
export async function startReconciler(
  deps: ReconcileDeps & { concurrency: number; onPass: (pass: PasadaConciliacion) => void; listIds: () => Promise<number[]> },
): Promise<Reconciler> {
  const running = new Set<Promise<unknown>>();
  const run = (claimed: ClaimedPass) => {
    const pass = reconcileIntegracion(deps, claimed).then((result) => {
      deps.onPass(result);
      return result;
    });
    running.add(pass);
    void pass.catch(() => undefined).finally(() => running.delete(pass));
    return pass;
  };
  await duePassesNow(deps.db);
  const task = startPeriodic('reconciliation', Math.min(5_000, deps.intervalMs), deps.logger, async (stopped) => {
    const free = deps.concurrency - running.size;
    if (free <= 0 || stopped()) return;
    for (const claimed of await claimPasses(deps.db, deps.owner, deps.leaseMs, { limit: free })) void run(claimed);
  });
  return {
    async runNow(integracionId) {
      const ids = integracionId === undefined ? await deps.listIds() : [integracionId];
      if (integracionId !== undefined && !(await deps.listIds()).includes(integracionId)) {
        throw AppError.notFound('recurso_no_encontrado', 'Integración no encontrada, inactiva o sin API de la tienda');
      }
      return Promise.all(
        ids.map(async (id): Promise<PasadaConciliacion> => {
          const [claimed] = await claimPasses(deps.db, deps.owner, deps.leaseMs, { integracionId: id });
          if (!claimed) {
            return {
              id_integracion: id,
              resultado: 'ocupada',
              error: null,
              pedidos_leidos: 0,
              pedidos_entregados: 0,
              pedidos_nuevos: 0,
              suscripcion: 'desconocida',
            };
          }
          return run(claimed);
        }),
      );
    },
    async stop() {
      await task.stop();
      await Promise.allSettled([...running]);
    },
  };
}
