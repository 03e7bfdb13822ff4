import type { Kysely } from 'kysely';
import { EXPORT_WRITERS, enqueueEvent, exportStore, type Bus } from '@erp/bus';
import { Exportacion, exportsEvents, isAppError } from '@erp/contracts';
import { inTransaction } from '@erp/db';
import { startLoop, type AppLogger, type Worker } from '@erp/runtime';
import type { ExportsConfig } from '../config';
import {
  claimExportacion,
  completeExportacion,
  expiredObjetos,
  failIntento,
  forgetArchivo,
  forgetObjeto,
  giveBackLease,
  recordArchivo,
  renewLease,
  strayArchivos,
  type ClaimedExportacion,
} from '../db/exportacion.repository';
import type { ExportsDb } from '../db/tables';
import { objetoOf, toExportacion } from '../domain/exportacion';
import { removeArchivo } from '../flows/remove-archivo.flow';
import { writeArchivo } from '../flows/write-archivo.flow';

export interface ExportacionWorkerDeps {
  db: Kysely<ExportsDb>;
  bus: Bus;
  logger: AppLogger;
  config: Readonly<ExportsConfig>;
  /** An event was recorded in the outbox (the relay publishes it at once). */
  onEvent: () => void;
  /** An export failed for good: its last attempt failed (erp_exports_failed_total). */
  onFailed?: () => void;
}

/**
 * Runs the queued exports: claims a job with a lease, asks the owning service to write the
 * attempt's file, renews the lease while it waits, and points the job to the file in the same
 * transaction that makes it `completada` (with its event), only if the attempt still holds the
 * job. A worker that dies stops renewing: its job is claimed again, as a new attempt with its own
 * object, by any replica. Each attempt's file is recorded before its owner is asked to write it,
 * so the files no job points to are found in those records. Also removes the files of exports
 * past `expira`. `nudge()` when a job was created; `stop()` takes no more jobs and gives back the
 * ones it runs (their lease ends now), so another replica or the next start takes them over
 * without waiting for the lease to run out.
 */
export function startExportacionWorker(deps: ExportacionWorkerDeps): Required<Worker> {
  const { db, bus, config, logger } = deps;
  /**
   * The attempts this process runs, each counted apart: after a stall longer than its lease, this
   * process may claim a job it still runs (a new attempt), and both hold a snapshot in the owner
   * until the first one ends, so both count against the concurrency.
   */
  const running = new Set<{ id: number; intento: number }>();
  let stopped = false;
  let lastOrphanSweep = 0;

  /**
   * Removes the recorded files no job points to and no running attempt will complete: written by
   * an attempt that failed, was cancelled or lost its job (its worker died, and its owner finished
   * after the job moved on), of one job or of all. A record goes once its file was found and
   * removed; one whose file is not there stays, as its owner may still be writing it, until it is
   * older than the store keeps any file.
   */
  const removeStrayArchivos = async (exportacionId?: number): Promise<void> => {
    for (const { recurso, objeto, vencido } of await strayArchivos(db, await longestArchivoAgeMs(bus), exportacionId)) {
      if ((await removeArchivo(bus, recurso, objeto, `archivos-${exportacionId ?? 'barrido'}`)) || vencido) await forgetArchivo(db, objeto);
    }
  };

  const run = async (exportacion: ClaimedExportacion): Promise<void> => {
    const objeto = objetoOf(exportacion);
    const log = logger.child({ exportacion: exportacion.id, intento: exportacion.intento });
    const heartbeat = setInterval(
      () => {
        renewLease(db, exportacion.id, exportacion.intento, config.EXPORT_LEASE_MS).then(
          (held) => held || log.info({}, 'export no longer held by this attempt (cancelled or taken over)'),
          (err: unknown) => log.warn({ err }, 'export lease not renewed'),
        );
      },
      Math.max(100, Math.floor(config.EXPORT_LEASE_MS / 3)),
    );
    heartbeat.unref();
    try {
      // Before the owner is asked: a file it writes is found whatever happens to this worker.
      await recordArchivo(db, exportacion, objeto);
      const archivo = await writeArchivo(bus, exportacion, objeto, config.EXPORT_WRITE_TIMEOUT_MS);
      const done = await inTransaction(db, async (trx) => {
        const row = await completeExportacion(trx, exportacion, { objeto, ...archivo }, config.EXPORT_TTL_MS);
        if (row) {
          const payload = { empresa_id: exportacion.empresa_id, exportacion: Exportacion.parse(toExportacion(row)) };
          await enqueueEvent(trx, exportsEvents, 'events.exports.export.completed', payload, exportacion.contexto);
        }
        return row;
      });
      if (!done) {
        // Cancelled, or taken over by another attempt, while this one wrote: its file is nobody's.
        await removeStrayArchivos(exportacion.id);
        return;
      }
      deps.onEvent();
      // Files of earlier attempts whose writers finished after their worker died.
      await removeStrayArchivos(exportacion.id).catch((err: unknown) => log.warn({ err }, 'files of earlier attempts left to the sweep'));
    } catch (err) {
      if (stopped) return;
      log.warn({ err }, 'export attempt failed');
      const reason = isAppError(err) ? err.message : 'Error interno al escribir el archivo de la exportación';
      const row = await inTransaction(db, async (trx) => {
        const failed = await failIntento(trx, exportacion, reason, {
          maxAttempts: config.EXPORT_MAX_ATTEMPTS,
          backoffMs: config.EXPORT_RETRY_BACKOFF_MS,
        });
        if (failed?.estado === 'fallida') {
          const payload = { empresa_id: exportacion.empresa_id, exportacion: Exportacion.parse(toExportacion(failed)) };
          await enqueueEvent(trx, exportsEvents, 'events.exports.export.failed', payload, exportacion.contexto);
        }
        return failed;
      });
      if (row?.estado === 'fallida') {
        deps.onEvent();
        deps.onFailed?.();
      }
      await removeStrayArchivos(exportacion.id).catch(() => undefined);
    } finally {
      clearInterval(heartbeat);
    }
  };

  // One pass at a time (the loop's runs never overlap): the poll and a nudge never claim past the concurrency together.
  const loop = startLoop('export worker', { retryMs: config.EXPORT_POLL_MS, logger }, async () => {
    while (!stopped && running.size < config.EXPORT_CONCURRENCY) {
      const exportacion = await claimExportacion(db, config.EXPORT_LEASE_MS);
      if (!exportacion) break;
      const intento = { id: exportacion.id, intento: exportacion.intento };
      running.add(intento);
      void run(exportacion)
        .catch((err: unknown) => logger.warn({ err, exportacion: exportacion.id }, 'export attempt left unsettled; its lease runs out'))
        .finally(() => running.delete(intento));
    }
    for (const { id, recurso, objeto } of await expiredObjetos(db, 100)) {
      await removeArchivo(bus, recurso, objeto, `exportacion-${id}-expira`);
      await forgetObjeto(db, id, objeto);
    }
    if (Date.now() - lastOrphanSweep >= config.EXPORT_ORPHAN_SWEEP_MS) {
      lastOrphanSweep = Date.now();
      await removeStrayArchivos();
    }
    return config.EXPORT_POLL_MS;
  });

  return {
    nudge: () => loop.nudge(),
    async stop() {
      stopped = true;
      await loop.stop();
      for (const { id, intento } of running) {
        await giveBackLease(db, id, intento).catch((err: unknown) =>
          logger.warn({ err, exportacion: id }, 'export lease not given back; it runs out by itself'),
        );
      }
    },
  };
}

/** The longest any export store keeps a file (0: one keeps them for ever): a record older than that has no file left. */
async function longestArchivoAgeMs(bus: Bus): Promise<number> {
  const ages = await Promise.all(EXPORT_WRITERS.map(async (writer) => (await exportStore(bus, writer)).maxAgeMs));
  return ages.includes(0) ? 0 : Math.max(...ages);
}
