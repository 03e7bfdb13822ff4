import type { Kysely } from 'kysely';
import { dedupKey, findEntregaIds, insertEntregas, type NuevaEntrega } from '../db/entrega.repository';
import type { WebhookDb } from '../db/tables';
import { Gatherer } from '@erp/runtime';

export type Almacenada = { estado: 'recibida' | 'duplicada'; id_entrega: number | null };

interface Waiting {
  entrega: NuevaEntrega;
  resolve: (stored: Almacenada) => void;
  reject: (err: unknown) => void;
}

export interface EntregaBatcherOptions {
  /** How long the first delivery of a batch waits for others (0: those arriving in the same turn of the event loop). */
  windowMs: number;
  /** A batch this large is stored at once, without waiting for the window to end. */
  maxBatch: number;
  /** Batches being stored at once; while that many are, new deliveries gather for the next one. */
  maxInFlight: number;
  /** Called after a batch stored at least one new delivery (its events wait in the outbox). */
  onStored: () => void;
}

/**
 * Group commit of deliveries: what arrives together (within `windowMs`, or while the batches
 * before are being stored) is stored in one statement, and each caller is answered when that
 * statement has committed, so an answered delivery is durable. The same (integration, dedup key)
 * twice in one batch is stored once: the first caller gets `recibida`, the others `duplicada`
 * with the same id, as if they had come one after another. A batch that fails is retried one
 * delivery at a time, so one bad delivery fails only its caller.
 */
export class EntregaBatcher {
  private readonly gatherer: Gatherer<Waiting>;

  constructor(
    private readonly db: Kysely<WebhookDb>,
    private readonly options: EntregaBatcherOptions,
  ) {
    this.gatherer = new Gatherer({ ...options, handle: (batch) => this.write(batch, true) });
  }

  store(entrega: NuevaEntrega): Promise<Almacenada> {
    return new Promise<Almacenada>((resolve, reject) => this.gatherer.add({ entrega, resolve, reject }));
  }

  private async write(batch: Waiting[], splitOnFailure: boolean): Promise<void> {
    const byKey = new Map<string, Waiting[]>();
    for (const w of batch) {
      const key = dedupKey(w.entrega.integracion_id, w.entrega.clave_dedup);
      byKey.set(key, [...(byKey.get(key) ?? []), w]);
    }
    // In key order, as every batch of every replica: two batches with keys in common then wait
    // for each other in one direction, never in a circle (a deadlock).
    const firsts = [...byKey.values()]
      .map((ws) => ws[0]!.entrega)
      .sort((a, b) => a.integracion_id - b.integracion_id || (a.clave_dedup < b.clave_dedup ? -1 : a.clave_dedup > b.clave_dedup ? 1 : 0));
    let answers: Map<string, Almacenada[]>;
    let stored: boolean;
    try {
      const inserted = await insertEntregas(this.db, firsts);
      const known = await findEntregaIds(
        this.db,
        firsts.filter((e) => !inserted.has(dedupKey(e.integracion_id, e.clave_dedup))),
      );
      answers = new Map(
        [...byKey.entries()].map(([key, ws]) => {
          const id = inserted.get(key);
          return [
            key,
            ws.map((_, i) =>
              id !== undefined && i === 0
                ? { estado: 'recibida', id_entrega: id }
                : { estado: 'duplicada', id_entrega: id ?? known.get(key) ?? null },
            ),
          ];
        }),
      );
      stored = inserted.size > 0;
    } catch (err) {
      if (splitOnFailure && byKey.size > 1) {
        await Promise.all([...byKey.values()].map((ws) => this.write(ws, false)));
        return;
      }
      for (const w of batch) w.reject(err);
      return;
    }
    if (stored) this.options.onStored();
    for (const [key, ws] of byKey) ws.forEach((w, i) => w.resolve(answers.get(key)![i]!));
  }
}
