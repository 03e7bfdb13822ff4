import type { Kysely } from 'kysely';
import { deleteObject, enqueueEvent, listObjects, type Bus } from '@erp/bus';
import { Exportacion, exportsEvents, isAppError } from '@erp/contracts';
import { inTransaction } from '@erp/db';
import { startPeriodic, type AppLogger, type PeriodicTask } from '@erp/runtime';
import type { ExportsConfig } from '../config';
import {
  attemptsOf,
  claimExportacion,
  completeExportacion,
  expiredFiles,
  failAttempt,
  forgetObjeto,
  renewLease,
  type ExportJob,
} from '../db/exportacion.repository';
import type { ExportsDb } from '../db/tables';
import { objectName, parseObjectName, toExportacion } from '../domain/exportacion';
import { writeExportFile } from '../flows/owners.port';

export interface ExportWorkerDeps {
  db: Kysely<ExportsDb>;
  bus: Bus;
  logger: AppLogger;
  config: Readonly<ExportsConfig>;
  /** An event was recorded in the outbox (the relay publishes it at once). */
  onEvent: () => void;
}

/**
 * Runs the queued exports: claims a job with a lease, asks the owning service to write the
 * attempt's file, renews the lease while it waits, and points the job to the file in the same
 * transaction that makes it `completada` (with its event), only if the attempt still holds the
 * job. A worker that dies stops renewing: its job is claimed again, as a new attempt with its own
 * object, by any replica. Also removes the files of exports past `expira`.
 */
export class ExportWorker {
  private readonly running = new Map<number, { intento: number; work: Promise<void> }>();
  private periodic: PeriodicTask | undefined;
  private stopped = false;
  private ticking: Promise<void> | undefined;
  private lastOrphanSweep = 0;

  constructor(private readonly deps: ExportWorkerDeps) {}

  start(): void {
    this.periodic = startPeriodic('export worker', this.deps.config.EXPORT_POLL_MS, this.deps.logger, () => this.tick());
  }

  /** Looks for work now (a job was just created). */
  nudge(): void {
    void this.tick().catch((err: unknown) => this.deps.logger.warn({ err }, 'export worker failed; will retry'));
  }

  /**
   * Takes no more jobs and gives back the ones it runs (their lease ends now), so another replica
   * or the next start takes them over without waiting for the lease to run out.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.periodic?.stop();
    await this.ticking?.catch(() => undefined);
    for (const [id, { intento }] of this.running) {
      await this.deps.db
        .updateTable('exportaciones')
        .set({ lease_hasta: new Date() })
        .where('id', '=', id)
        .where('intento', '=', intento)
        .where('estado', '=', 'procesando')
        .execute()
        .catch((err: unknown) => this.deps.logger.warn({ err, exportacion: id }, 'export lease not given back; it runs out by itself'));
    }
  }

  private tick(): Promise<void> {
    // One tick at a time: the timer and a nudge never claim past the concurrency together.
    return (this.ticking ??= this.claimAndExpire().finally(() => (this.ticking = undefined)));
  }

  private async claimAndExpire(): Promise<void> {
    const { db, config } = this.deps;
    while (!this.stopped && this.running.size < config.EXPORT_CONCURRENCY) {
      const job = await claimExportacion(db, config.EXPORT_LEASE_MS);
      if (!job) break;
      const work = this.run(job)
        .catch((err: unknown) => this.deps.logger.warn({ err, exportacion: job.id }, 'export attempt left unsettled; its lease runs out'))
        .finally(() => this.running.delete(job.id));
      this.running.set(job.id, { intento: job.intento, work });
    }
    for (const { id, objeto } of await expiredFiles(db, 100)) {
      await deleteObject(this.deps.bus, objeto);
      await forgetObjeto(db, id, objeto);
    }
    if (Date.now() - this.lastOrphanSweep >= config.EXPORT_ORPHAN_SWEEP_MS) {
      this.lastOrphanSweep = Date.now();
      await this.removeOrphans();
    }
  }

  /**
   * Removes the files no job points to and no running attempt will: written by an attempt whose
   * worker died (or lost the job) and whose owner finished after the job moved on. A file appears
   * in the store only once complete, so a file being written is never taken for one.
   */
  private async removeOrphans(): Promise<void> {
    const { db, bus } = this.deps;
    const files = (await listObjects(bus)).map((name) => ({ name, attempt: parseObjectName(name) }));
    const ids = [...new Set(files.flatMap((f) => (f.attempt ? [f.attempt.id] : [])))];
    const jobs = new Map((await attemptsOf(db, ids)).map((j) => [j.id, j]));
    for (const { name, attempt } of files) {
      const job = attempt && jobs.get(attempt.id);
      const kept = job && (job.objeto === name || (job.estado === 'procesando' && job.intento === attempt.intento));
      if (!kept) await deleteObject(bus, name);
    }
  }

  private async run(job: ExportJob): Promise<void> {
    const { db, bus, config, logger } = this.deps;
    const objeto = objectName(job);
    const log = logger.child({ exportacion: job.id, intento: job.intento });
    const heartbeat = setInterval(
      () => {
        renewLease(db, job.id, job.intento, config.EXPORT_LEASE_MS).then(
          (held) => held || log.info({}, 'export no longer held by this attempt (cancelled or taken over)'),
          (err: unknown) => log.warn({ err }, 'export lease not renewed'),
        );
      },
      Math.max(100, Math.floor(config.EXPORT_LEASE_MS / 3)),
    );
    heartbeat.unref();
    try {
      const file = await writeExportFile(bus, job, objeto, config.EXPORT_WRITE_TIMEOUT_MS);
      const done = await inTransaction(db, async (trx) => {
        const row = await completeExportacion(trx, job, { objeto, ...file }, config.EXPORT_TTL_MS);
        if (row) {
          const payload = { empresa_id: job.empresa_id, exportacion: Exportacion.parse(toExportacion(row)) };
          await enqueueEvent(trx, exportsEvents, 'events.exports.export.completed', payload, job.contexto);
        }
        return row;
      });
      if (!done) {
        // Cancelled, or taken over by another attempt, while this one wrote: its file is nobody's.
        await deleteObject(bus, objeto);
        return;
      }
      this.deps.onEvent();
      // Files of earlier attempts whose writers finished after their worker died.
      for (let intento = 1; intento < job.intento; intento++) await deleteObject(bus, objectName({ ...job, intento }));
    } catch (err) {
      if (this.stopped) return;
      log.warn({ err }, 'export attempt failed');
      const reason = isAppError(err) ? err.message : 'Error interno al escribir el archivo de la exportación';
      const row = await inTransaction(db, async (trx) => {
        const failed = await failAttempt(trx, job, reason, config.EXPORT_MAX_ATTEMPTS);
        if (failed?.estado === 'fallida') {
          const payload = { empresa_id: job.empresa_id, exportacion: Exportacion.parse(toExportacion(failed)) };
          await enqueueEvent(trx, exportsEvents, 'events.exports.export.failed', payload, job.contexto);
        }
        return failed;
      });
      if (row?.estado === 'fallida') this.deps.onEvent();
      await deleteObject(bus, objeto).catch(() => undefined);
    } finally {
      clearInterval(heartbeat);
    }
  }
}
