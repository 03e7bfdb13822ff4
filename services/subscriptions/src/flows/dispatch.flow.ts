import type { Kysely } from 'kysely';
import type { Logger } from '@erp/bus';
import { dueEntregas, markEntregada, markFallida, recordIntento, takeEntrega, type TakenEntrega } from '../db/entrega.repository';
import { deleteEventosBefore } from '../db/evento.repository';
import { disableSuscripcion } from '../db/suscripcion.repository';
import type { SubscriptionsDb } from '../db/tables';
import { retryDelayMs, retryWindowSpent } from '../domain/retry';
import { signDelivery } from '../domain/signature';
import type { SubscriptionsConfig } from '../config';
import { postEvent } from './post-event.flow';

export interface DispatcherOptions {
  db: Kysely<SubscriptionsDb>;
  config: Readonly<SubscriptionsConfig>;
  logger: Logger;
  /** Told the outcome of every attempt (metrics). */
  onAttempt?: (outcome: 'delivered' | 'failed') => void;
}

/**
 * Sends what is owed to subscriptions: polls for due deliveries, holds each under a lease (a
 * sender that dies lets it go when the lease ends: at-least-once), signs and posts it, and
 * records the attempt. Bounded in flight overall and per subscription; one resource's deliveries
 * wait for each other (see `dueEntregas`).
 */
export class Dispatcher {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private polling: Promise<void> | undefined;
  private readonly inFlight = new Map<number, number>();
  private readonly sending = new Set<Promise<void>>();
  private lastCleanup = 0;

  constructor(private readonly options: DispatcherOptions) {}

  start(): void {
    this.schedule(0);
  }

  /** Stops polling and waits for the deliveries in flight (each ends within its timeout). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.polling?.catch(() => undefined);
    await Promise.allSettled([...this.sending]);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.polling = this.poll()
        .catch((err: unknown) => this.options.logger.warn({ err }, 'delivery poll failed; will retry'))
        .finally(() => {
          this.polling = undefined;
          this.schedule(this.options.config.EVENTS_POLL_MS);
        });
    }, ms);
  }

  private async poll(): Promise<void> {
    const { db, config } = this.options;
    await this.cleanup();
    const free = config.EVENTS_MAX_CONCURRENCY - this.sending.size;
    if (free <= 0) return;
    const due = await dueEntregas(db, Math.max(free * 4, 100));
    let started = 0;
    for (const candidate of due) {
      if (started >= free || this.stopped) break;
      const busy = this.inFlight.get(candidate.suscripcion_id) ?? 0;
      if (busy >= config.EVENTS_MAX_PER_SUBSCRIPTION) continue;
      // The lease outlasts a delivery (its timeout) with room for the bookkeeping after it.
      const entrega = await takeEntrega(db, candidate.id, 2 * config.EVENTS_DELIVERY_TIMEOUT_MS + 5_000);
      if (!entrega) continue;
      started++;
      this.inFlight.set(entrega.suscripcion_id, busy + 1);
      const work = this.send(entrega)
        .catch((err: unknown) =>
          this.options.logger.warn({ err, entrega: entrega.id }, 'delivery bookkeeping failed; it will be sent again'),
        )
        .finally(() => {
          this.sending.delete(work);
          const left = (this.inFlight.get(entrega.suscripcion_id) ?? 1) - 1;
          if (left > 0) this.inFlight.set(entrega.suscripcion_id, left);
          else this.inFlight.delete(entrega.suscripcion_id);
        });
      this.sending.add(work);
    }
  }

  private async send(entrega: TakenEntrega): Promise<void> {
    const { db, config, logger } = this.options;
    const body = JSON.stringify({
      id: entrega.evento_id,
      type: entrega.tipo,
      timestamp: entrega.ocurrido_at.toISOString(),
      data: entrega.data,
    });
    const timestamp = Math.floor(Date.now() / 1000);
    const outcome = await postEvent(
      entrega.url,
      body,
      {
        'webhook-id': entrega.evento_id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signDelivery(entrega.secreto, entrega.evento_id, timestamp, body),
      },
      { allowPrivate: config.EVENTS_ALLOW_PRIVATE_URLS, allowHttp: config.EVENTS_ALLOW_HTTP, timeoutMs: config.EVENTS_DELIVERY_TIMEOUT_MS },
    );
    const ok = outcome.status !== null && outcome.status >= 200 && outcome.status < 300;
    const error = ok ? null : (outcome.error ?? `HTTP ${outcome.status}`);
    await recordIntento(db, {
      suscripcion_id: entrega.suscripcion_id,
      evento_id: entrega.evento_id,
      tipo: entrega.tipo,
      intento: entrega.intentos + 1,
      status: outcome.status,
      error,
      duracion_ms: outcome.durationMs,
    });
    this.options.onAttempt?.(ok ? 'delivered' : 'failed');
    if (ok) return markEntregada(db, entrega.id);
    const now = new Date();
    const primerFallo = entrega.primer_fallo_at ?? now;
    await markFallida(
      db,
      entrega.id,
      new Date(now.getTime() + retryDelayMs(config.EVENTS_RETRY_SCHEDULE_MS, entrega.intentos + 1)),
      primerFallo,
    );
    if (retryWindowSpent(primerFallo, now, config.EVENTS_RETRY_WINDOW_MS)) {
      const motivo = `Las entregas fallan desde ${primerFallo.toISOString()}; último error: ${error}`;
      await disableSuscripcion(db, entrega.suscripcion_id, motivo.slice(0, 500));
      logger.warn(
        { suscripcion: entrega.suscripcion_id, since: primerFallo.toISOString() },
        'subscription disabled after its retry window',
      );
    }
  }

  private async cleanup(): Promise<void> {
    if (Date.now() - this.lastCleanup < 3600_000) return;
    this.lastCleanup = Date.now();
    await deleteEventosBefore(this.options.db, new Date(Date.now() - this.options.config.EVENTS_RETENTION_DAYS * 24 * 3600_000));
  }
}
