import type { Kysely } from 'kysely';
import type { Logger } from '@erp/bus';
import { inTransaction } from '@erp/db';
import { startLoop, type Worker } from '@erp/runtime';
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
import { postEvento } from '../flows/post-evento.flow';

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
 * `nudge()` when new deliveries are owed: they are claimed now instead of at the next poll.
 * `stop()` stops claiming, lets each lane finish the delivery it is sending (each ends within its
 * timeout) and records them.
 */
export function startDispatcher(options: DispatcherOptions): Required<Worker> {
  const { db, config, logger } = options;
  let stopped = false;
  /** True during a pass: a send that ends meanwhile is seen at its end, which then goes again at once. */
  let claiming = false;
  /** Set when new deliveries were recorded in this process since the loop last claimed. */
  let nudged = false;
  const lanes = new Map<number, number>();
  let openLanes = 0;
  const sending = new Set<Promise<void>>();
  /** When each subscription last failed here: its other lanes stop at their next delivery. */
  const failedAt = new Map<number, number>();
  let outcome = emptyOutcome();
  let failures: Failure[] = [];
  let lastCleanup = 0;

  /** Ends the loop's wait; a pass under way is left alone (see `claiming`). */
  const wake = () => {
    if (!claiming) loop.nudge();
  };

  /** Writes what the sends since the last call came to; kept for the next call when the database refuses. */
  const flush = async (): Promise<void> => {
    const written = outcome;
    const failed = failures;
    if (written.intentos.length === 0 && written.liberadas.length === 0) return;
    outcome = emptyOutcome();
    failures = [];
    try {
      await inTransaction(db, async (trx) => {
        await recordOutcome(trx, written);
        for (const failure of failed) {
          await pauseSuscripcion(trx, failure.suscripcionId, config.EVENTS_RETRY_SCHEDULE_MS);
          if (failure.motivo) await disableSuscripcion(trx, failure.suscripcionId, failure.motivo);
        }
      });
    } catch (err) {
      outcome = mergeOutcomes(written, outcome);
      failures = [...failed, ...failures];
      throw err;
    }
    for (const failure of failed)
      if (failure.motivo) logger.warn({ suscripcion: failure.suscripcionId }, 'subscription disabled after its retry window');
    const horizon = Date.now() - 2 * (config.EVENTS_DELIVERY_TIMEOUT_MS + 1_000) * LANE_LENGTH;
    for (const [id, at] of failedAt) if (at < horizon) failedAt.delete(id);
  };

  const cleanup = async (): Promise<void> => {
    if (Date.now() - lastCleanup < 3600_000) return;
    lastCleanup = Date.now();
    await deleteEventosBefore(db, new Date(Date.now() - config.EVENTS_RETENTION_DAYS * 24 * 3600_000));
  };

  /** Posts one delivery and notes what it came to; true when the receiver answered 2xx. */
  const send = async (entrega: ClaimedEntrega): Promise<boolean> => {
    const body = JSON.stringify({
      id: entrega.evento_id,
      type: entrega.tipo,
      timestamp: entrega.ocurrido_at.toISOString(),
      data: currentData(entrega.tipo, entrega.data),
    });
    const timestamp = Math.floor(Date.now() / 1000);
    const secrets = entrega.secreto_anterior ? [entrega.secreto, entrega.secreto_anterior] : [entrega.secreto];
    const result = await postEvento(
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
    outcome.intentos.push(intento);
    options.onAttempt?.(ok ? 'delivered' : 'failed');
    if (ok) {
      outcome.entregadas.push(entrega.id);
      outcome.sanas.push(entrega.suscripcion_id);
      return true;
    }
    const now = new Date();
    const primerFallo = entrega.primer_fallo_at ?? now;
    outcome.fallidas.push({
      id: entrega.id,
      proximo: new Date(now.getTime() + retryDelayMs(config.EVENTS_RETRY_SCHEDULE_MS, entrega.intentos + 1)),
      primerFallo,
    });
    failedAt.set(entrega.suscripcion_id, now.getTime());
    const spent = retryWindowSpent(primerFallo, now, config.EVENTS_RETRY_WINDOW_MS);
    failures.push({
      suscripcionId: entrega.suscripcion_id,
      motivo: spent ? `Las entregas fallan desde ${primerFallo.toISOString()}; último error: ${error}`.slice(0, 500) : null,
    });
    return false;
  };

  const sendLane = async (lane: readonly ClaimedEntrega[]): Promise<void> => {
    const started = Date.now();
    for (const [i, entrega] of lane.entries()) {
      const failedSince = failedAt.get(entrega.suscripcion_id);
      if (stopped || (failedSince !== undefined && failedSince >= started)) {
        outcome.liberadas.push(...lane.slice(i).map((e) => e.id));
        return;
      }
      if (!(await send(entrega))) {
        outcome.liberadas.push(...lane.slice(i + 1).map((e) => e.id));
        return;
      }
      // The resource's next delivery is claimable once this one is recorded.
      wake();
    }
  };

  const open = (lane: ClaimedEntrega[]): void => {
    const suscripcionId = lane[0]!.suscripcion_id;
    lanes.set(suscripcionId, (lanes.get(suscripcionId) ?? 0) + 1);
    openLanes++;
    const work = sendLane(lane)
      .catch((err: unknown) => logger.warn({ err, suscripcion: suscripcionId }, 'delivery lane failed; its deliveries will be sent again'))
      .finally(() => {
        sending.delete(work);
        openLanes--;
        const left = (lanes.get(suscripcionId) ?? 1) - 1;
        if (left > 0) lanes.set(suscripcionId, left);
        else lanes.delete(suscripcionId);
        wake();
      });
    sending.add(work);
  };

  const claim = async (): Promise<number> => {
    const free = config.EVENTS_MAX_CONCURRENCY - openLanes;
    if (free <= 0) return 0;
    const claimed = await inTransaction(db, (trx) =>
      claimEntregas(trx, {
        lanes: free,
        lanesPerSuscripcion: config.EVENTS_MAX_PER_SUBSCRIPTION,
        busy: lanes,
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
    for (const lane of byLane.values()) open(lane);
    return byLane.size;
  };

  // A failed pass waits a whole poll, even when nudged.
  const loop = startLoop('delivery loop', { retryMs: config.EVENTS_POLL_MS, logger }, async () => {
    nudged = false;
    claiming = true;
    let opened: number;
    try {
      await flush();
      await cleanup();
      opened = await claim();
    } finally {
      claiming = false;
    }
    // A claim that opened lanes may have left more behind (a window or a lane's length), and
    // sends that ended meanwhile wait to be recorded: go again at once; otherwise wait for a
    // send to end or the next poll.
    const owed = outcome.intentos.length > 0 || outcome.liberadas.length > 0;
    if (owed || (opened > 0 && openLanes < config.EVENTS_MAX_CONCURRENCY)) return 0;
    // New events: claim them after a few milliseconds, so a burst of them is claimed at once.
    return nudged ? NUDGE_COALESCE_MS : config.EVENTS_POLL_MS;
  });

  return {
    nudge() {
      if (nudged) return;
      nudged = true;
      wake();
    },
    async stop() {
      stopped = true;
      await loop.stop();
      await Promise.allSettled([...sending]);
      await flush().catch((err: unknown) => logger.warn({ err }, 'delivery bookkeeping failed at stop; they will be sent again'));
    },
  };
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
