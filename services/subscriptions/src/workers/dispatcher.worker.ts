import type { Kysely } from 'kysely';
import type { Logger } from '@erp/bus';
import { inTransaction } from '@erp/db';
import {
  claimEntregas,
  pauseSuscripcion,
  recordOutcome,
  type ClaimedEntrega,
  type DispatchOutcome,
  type IntentoInput,
} from '../db/entrega.repository';
import { deleteEventosBefore } from '../db/evento.repository';
import { disableSuscripcion } from '../db/suscripcion.repository';
import type { SubscriptionsDb } from '../db/tables';
import { currentData } from '../domain/partner-events';
import { retryDelayMs, retryWindowSpent } from '../domain/retry';
import { signDelivery } from '../domain/signature';
import type { SubscriptionsConfig } from '../config';
import { postEvent } from '../flows/post-event.flow';

export interface DispatcherOptions {
  db: Kysely<SubscriptionsDb>;
  config: Readonly<SubscriptionsConfig>;
  logger: Logger;
  /** Told the outcome of every attempt (metrics). */
  onAttempt?: (outcome: 'delivered' | 'failed') => void;
}

/** Deliveries one lane carries per claim: long enough to drain a backlog, short enough that a lease stays short. */
const LANE_LENGTH = 25;
/** Owed deliveries of a subscription a claim looks at, from the head of its queue. */
const WINDOW = 256;
const NUDGE_COALESCE_MS = 10;

interface Failure {
  suscripcionId: number;
  /** Set when its retry window is spent: the subscription is disabled with it. */
  motivo: string | null;
}

/**
 * Sends what is owed to subscriptions. One loop writes what the last sends came to and claims
 * what may go next (`claimEntregas`: a few statements per batch, whatever its size); each claimed
 * lane is a run of deliveries posted one after another over a kept-alive connection, so a
 * resource's deliveries keep their order and a subscription has at most
 * `EVENTS_MAX_PER_SUBSCRIPTION` in flight. A delivery is held under a lease while it is sent (a
 * sender that dies lets it go when the lease ends: at-least-once, the same `webhook-id`). A
 * failure stops its lane, schedules its retry and pauses the subscription as a whole, so a dead or
 * slow endpoint holds none of the others' lanes and is not tried once per owed resource.
 */
export class Dispatcher {
  private stopped = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  /** Set when new deliveries were recorded in this process since the loop last claimed. */
  private nudged = false;
  private readonly lanes = new Map<number, number>();
  private openLanes = 0;
  private readonly sending = new Set<Promise<void>>();
  /** When each subscription last failed here: its other lanes stop at their next delivery. */
  private readonly failedAt = new Map<number, number>();
  private outcome = emptyOutcome();
  private failures: Failure[] = [];
  private lastCleanup = 0;

  constructor(private readonly options: DispatcherOptions) {}

  start(): void {
    this.loop = this.run();
  }

  /** New deliveries are owed: claim them now instead of at the next poll. */
  nudge(): void {
    if (this.nudged) return;
    this.nudged = true;
    this.wake?.();
  }

  /** Stops claiming, lets each lane finish the delivery it is sending (each ends within its timeout) and records them. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
    await Promise.allSettled([...this.sending]);
    await this.flush().catch((err: unknown) =>
      this.options.logger.warn({ err }, 'delivery bookkeeping failed at stop; they will be sent again'),
    );
  }

  private async run(): Promise<void> {
    const { config, logger } = this.options;
    while (!this.stopped) {
      let opened = 0;
      let failed = false;
      this.nudged = false;
      try {
        await this.flush();
        await this.cleanup();
        opened = await this.claim();
      } catch (err) {
        failed = true;
        logger.warn({ err }, 'delivery loop failed; will retry');
      }
      // A claim that opened lanes may have left more behind (a window or a lane's length), and
      // sends that ended meanwhile wait to be recorded: go again at once; otherwise wait for a
      // send to end or the next poll.
      const owed = this.outcome.intentos.length > 0 || this.outcome.liberadas.length > 0;
      if (!failed && (owed || (opened > 0 && this.openLanes < config.EVENTS_MAX_CONCURRENCY))) continue;
      // New events: claim them after a few milliseconds, so a burst of them is claimed at once.
      await this.sleep(!failed && this.nudged ? NUDGE_COALESCE_MS : config.EVENTS_POLL_MS);
    }
  }

  private sleep(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }

  private async claim(): Promise<number> {
    const { db, config } = this.options;
    const free = config.EVENTS_MAX_CONCURRENCY - this.openLanes;
    if (free <= 0) return 0;
    const claimed = await inTransaction(db, (trx) =>
      claimEntregas(trx, {
        lanes: free,
        lanesPerSuscripcion: config.EVENTS_MAX_PER_SUBSCRIPTION,
        busy: this.lanes,
        laneLength: LANE_LENGTH,
        window: WINDOW,
        stepMs: config.EVENTS_DELIVERY_TIMEOUT_MS + 1_000,
      }),
    );
    const byLane = new Map<string, ClaimedEntrega[]>();
    for (const entrega of claimed) {
      const key = `${entrega.suscripcion_id}:${entrega.carril}`;
      const lane = byLane.get(key);
      if (lane) lane.push(entrega);
      else byLane.set(key, [entrega]);
    }
    for (const lane of byLane.values()) this.open(lane);
    return byLane.size;
  }

  private open(lane: ClaimedEntrega[]): void {
    const suscripcionId = lane[0]!.suscripcion_id;
    this.lanes.set(suscripcionId, (this.lanes.get(suscripcionId) ?? 0) + 1);
    this.openLanes++;
    const work = this.sendLane(lane)
      .catch((err: unknown) =>
        this.options.logger.warn({ err, suscripcion: suscripcionId }, 'delivery lane failed; its deliveries will be sent again'),
      )
      .finally(() => {
        this.sending.delete(work);
        this.openLanes--;
        const left = (this.lanes.get(suscripcionId) ?? 1) - 1;
        if (left > 0) this.lanes.set(suscripcionId, left);
        else this.lanes.delete(suscripcionId);
        this.wake?.();
      });
    this.sending.add(work);
  }

  private async sendLane(lane: readonly ClaimedEntrega[]): Promise<void> {
    const started = Date.now();
    for (const [i, entrega] of lane.entries()) {
      const failedAt = this.failedAt.get(entrega.suscripcion_id);
      if (this.stopped || (failedAt !== undefined && failedAt >= started)) {
        this.outcome.liberadas.push(...lane.slice(i).map((e) => e.id));
        return;
      }
      if (!(await this.send(entrega))) {
        this.outcome.liberadas.push(...lane.slice(i + 1).map((e) => e.id));
        return;
      }
      // The resource's next delivery is claimable once this one is recorded.
      this.wake?.();
    }
  }

  /** Posts one delivery and notes what it came to; true when the receiver answered 2xx. */
  private async send(entrega: ClaimedEntrega): Promise<boolean> {
    const { config } = this.options;
    const body = JSON.stringify({
      id: entrega.evento_id,
      type: entrega.tipo,
      timestamp: entrega.ocurrido_at.toISOString(),
      data: currentData(entrega.tipo, entrega.data),
    });
    const timestamp = Math.floor(Date.now() / 1000);
    const secrets = entrega.secreto_anterior ? [entrega.secreto, entrega.secreto_anterior] : [entrega.secreto];
    const result = await postEvent(
      entrega.url,
      body,
      {
        'webhook-id': entrega.evento_id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signDelivery(secrets, entrega.evento_id, timestamp, body),
      },
      { allowPrivate: config.EVENTS_ALLOW_PRIVATE_URLS, allowHttp: config.EVENTS_ALLOW_HTTP, timeoutMs: config.EVENTS_DELIVERY_TIMEOUT_MS },
    );
    const ok = result.status !== null && result.status >= 200 && result.status < 300;
    const error = ok ? null : (result.error ?? `HTTP ${result.status}`);
    const intento: IntentoInput = {
      suscripcion_id: entrega.suscripcion_id,
      evento_id: entrega.evento_id,
      tipo: entrega.tipo,
      intento: entrega.intentos + 1,
      status: result.status,
      error,
      duracion_ms: result.durationMs,
    };
    this.outcome.intentos.push(intento);
    this.options.onAttempt?.(ok ? 'delivered' : 'failed');
    if (ok) {
      this.outcome.entregadas.push(entrega.id);
      this.outcome.sanas.push(entrega.suscripcion_id);
      return true;
    }
    const now = new Date();
    const primerFallo = entrega.primer_fallo_at ?? now;
    this.outcome.fallidas.push({
      id: entrega.id,
      proximo: new Date(now.getTime() + retryDelayMs(config.EVENTS_RETRY_SCHEDULE_MS, entrega.intentos + 1)),
      primerFallo,
    });
    this.failedAt.set(entrega.suscripcion_id, now.getTime());
    const spent = retryWindowSpent(primerFallo, now, config.EVENTS_RETRY_WINDOW_MS);
    this.failures.push({
      suscripcionId: entrega.suscripcion_id,
      motivo: spent ? `Las entregas fallan desde ${primerFallo.toISOString()}; último error: ${error}`.slice(0, 500) : null,
    });
    return false;
  }

  /** Writes what the sends since the last call came to; kept for the next call when the database refuses. */
  private async flush(): Promise<void> {
    const { db, config, logger } = this.options;
    const outcome = this.outcome;
    const failures = this.failures;
    if (outcome.intentos.length === 0 && outcome.liberadas.length === 0) return;
    this.outcome = emptyOutcome();
    this.failures = [];
    try {
      await inTransaction(db, async (trx) => {
        await recordOutcome(trx, outcome);
        for (const failure of failures) {
          await pauseSuscripcion(trx, failure.suscripcionId, config.EVENTS_RETRY_SCHEDULE_MS);
          if (failure.motivo) await disableSuscripcion(trx, failure.suscripcionId, failure.motivo);
        }
      });
    } catch (err) {
      this.outcome = mergeOutcomes(outcome, this.outcome);
      this.failures = [...failures, ...this.failures];
      throw err;
    }
    for (const failure of failures)
      if (failure.motivo) logger.warn({ suscripcion: failure.suscripcionId }, 'subscription disabled after its retry window');
    const horizon = Date.now() - 2 * (config.EVENTS_DELIVERY_TIMEOUT_MS + 1_000) * LANE_LENGTH;
    for (const [id, at] of this.failedAt) if (at < horizon) this.failedAt.delete(id);
  }

  private async cleanup(): Promise<void> {
    if (Date.now() - this.lastCleanup < 3600_000) return;
    this.lastCleanup = Date.now();
    await deleteEventosBefore(this.options.db, new Date(Date.now() - this.options.config.EVENTS_RETENTION_DAYS * 24 * 3600_000));
  }
}

type MutableOutcome = { -readonly [K in keyof DispatchOutcome]: Array<DispatchOutcome[K][number]> };

function emptyOutcome(): MutableOutcome {
  return { intentos: [], entregadas: [], liberadas: [], fallidas: [], sanas: [] };
}

function mergeOutcomes(a: MutableOutcome, b: MutableOutcome): MutableOutcome {
  return {
    intentos: [...a.intentos, ...b.intentos],
    entregadas: [...a.entregadas, ...b.entregadas],
    liberadas: [...a.liberadas, ...b.liberadas],
    fallidas: [...a.fallidas, ...b.fallidas],
    sanas: [...a.sanas, ...b.sanas],
  };
}
