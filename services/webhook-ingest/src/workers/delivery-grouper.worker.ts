import type { Kysely } from 'kysely';
import type { Logger } from '@erp/bus';
import { entregaHeads } from '../db/entrega.repository';
import type { WebhookDb } from '../db/tables';
import { chunks } from '../domain/chunks';
import type { ProcessResult } from '../flows/process-entrega.flow';
import { processPedidoGroup } from '../flows/process-pedidos.flow';
import type { ProcessingDeps } from '../flows/process-pedido.flow';
import { Gatherer } from '@erp/runtime';
import type { IntakePace } from './intake-pace.worker';

export interface DeliveryGrouperOptions {
  /** Most deliveries processed together (at most a sales batch); below 2 nothing is grouped. */
  maxGroup: number;
  /** How long the first delivery waits for others before its group is formed (a full group is formed at once). */
  windowMs: number;
  /** Groups processed at once; while that many are, arriving deliveries gather for the next ones. */
  maxInFlight: number;
  /** Each group takes one turn of processing, as one delivery would. */
  pace: IntakePace;
  /** Told the size of each group processed, and how many of its deliveries it finished. */
  onGroup?: (size: number, finished: number) => void;
}

interface Waiting {
  id: number;
  attempt: number;
  resolve: (outcome: ProcessResult | undefined) => void;
}

/**
 * Gathers the deliveries the consumer hands over and processes new orders together: deliveries
 * that arrive together (within `windowMs`, or while `maxInFlight` groups are under way) and are orders of one
 * integration, one delivery per order, in the order they came, up to `maxGroup` at a time, go
 * through `processPedidoGroup`. Each caller is answered its delivery's outcome, or undefined when
 * it is to be processed alone: a delivery that is no new order, a later delivery of an order in a
 * group (answered once that group committed, so it applies after it), one the group left, or all
 * of a group that failed. Nothing is ever dropped: whatever a group did not finish, its caller does.
 */
export class DeliveryGrouper {
  private readonly gatherer: Gatherer<Waiting>;

  constructor(
    private readonly db: Kysely<WebhookDb>,
    private readonly deps: ProcessingDeps,
    private readonly options: DeliveryGrouperOptions,
    private readonly logger: Logger,
  ) {
    this.gatherer = new Gatherer({
      windowMs: options.windowMs,
      maxBatch: options.maxGroup,
      maxInFlight: options.maxInFlight,
      handle: (taken) => this.process(taken),
    });
  }

  /** The delivery's outcome when it was processed in a group; undefined when the caller is to process it alone. */
  submit(id: number, attempt: number): Promise<ProcessResult | undefined> {
    if (this.options.maxGroup < 2) return Promise.resolve(undefined);
    return new Promise((resolve) => this.gatherer.add({ id, attempt, resolve }));
  }

  private async process(taken: Waiting[]): Promise<void> {
    let groups: Waiting[][];
    let later: Waiting[];
    try {
      ({ groups, later } = await this.form(taken));
    } catch (err) {
      this.logger.warn({ err }, 'could not group deliveries; each is processed alone');
      for (const w of taken) w.resolve(undefined);
      return;
    }
    for (const group of groups) {
      const release = await this.options.pace.acquire();
      let results = new Map<number, ProcessResult>();
      try {
        results = await processPedidoGroup(this.db, this.deps, new Map(group.map((w) => [w.id, w.attempt])));
      } catch (err) {
        this.logger.warn({ err, deliveries: group.length }, 'a group of deliveries failed; each is processed alone');
      } finally {
        release();
      }
      this.options.onGroup?.(group.length, results.size);
      for (const w of group) w.resolve(results.get(w.id));
    }
    for (const w of later) w.resolve(undefined);
  }

  /**
   * The groups of `taken`: orders of one integration still `recibida`, the first delivery of each
   * order, in id order, at most `maxGroup` each; a group of one is no group. Deliveries that are in
   * none are answered at once, but later deliveries of an order, which wait for the groups (`later`).
   */
  private async form(taken: Waiting[]): Promise<{ groups: Waiting[][]; later: Waiting[] }> {
    const byId = new Map(taken.map((w) => [w.id, w]));
    const heads = await entregaHeads(this.db, [...byId.keys()]);
    const alone = new Set(taken);
    const later: Waiting[] = [];
    const byIntegracion = new Map<number, Waiting[]>();
    const orders = new Set<string>();
    for (const head of heads) {
      const w = byId.get(head.id)!;
      if (head.estado !== 'recibida' || head.recurso !== 'pedido' || head.tema === 'refunds/create' || head.referencia === null) continue;
      const order = `${head.integracion_id}:${head.referencia}`;
      alone.delete(w);
      if (orders.has(order)) {
        later.push(w);
        continue;
      }
      orders.add(order);
      byIntegracion.set(head.integracion_id, [...(byIntegracion.get(head.integracion_id) ?? []), w]);
    }
    const groups: Waiting[][] = [];
    for (const group of [...byIntegracion.values()].flatMap((ws) => chunks(ws, this.options.maxGroup))) {
      if (group.length > 1) groups.push(group);
      else alone.add(group[0]!);
    }
    for (const w of alone) w.resolve(undefined);
    return { groups, later };
  }
}
