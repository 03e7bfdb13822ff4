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
  /** Processes the delivery alone. */
  alone: () => Promise<ProcessResult>;
  resolve: (outcome: ProcessResult) => void;
  reject: (err: unknown) => void;
}

/** Processes `w` alone and answers its caller with the outcome, or the error. */
const answerAlone = (w: Waiting): void => void w.alone().then(w.resolve, w.reject);

/** A delivery with its order (`integracion:referencia`). */
interface Member {
  w: Waiting;
  order: string;
}

interface Group {
  members: Member[];
  /** Hands its members the group's outcomes (none when it failed). */
  settle: (results: Map<number, ProcessResult>) => void;
}

/**
 * Processes the deliveries the consumer hands over, new orders together, and the deliveries of
 * one order one after another. Deliveries that arrive together (within `windowMs`, or while
 * `maxInFlight` groups are under way) and are new orders of one integration, one delivery per
 * order, in the order they came, up to `maxGroup` at a time, go through `processPedidoGroup`; the
 * rest, and what a group did not finish, are processed alone (`alone`). A delivery of an order
 * whose earlier delivery is still being processed, in a group or alone, in its batch or in one
 * taken before, waits until that one is over: a cancellation received after its order applies
 * after it, whatever the batches they fell in. Each caller is answered its delivery's outcome, or
 * the error that processing it alone threw.
 */
export class DeliveryGrouper {
  private readonly gatherer: Gatherer<Waiting>;
  /** Per order, when the last of its deliveries handed over so far is over. */
  private readonly tails = new Map<string, Promise<void>>();
  /** Batches are formed one after another, so each sees the orders of those formed before it. */
  private forming: Promise<unknown> = Promise.resolve();

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

  /** The delivery's outcome, in a group or alone (`alone`), after its order's earlier deliveries. */
  submit(id: number, attempt: number, alone: () => Promise<ProcessResult>): Promise<ProcessResult> {
    if (this.options.maxGroup < 2) return alone();
    return new Promise((resolve, reject) => this.gatherer.add({ id, attempt, alone, resolve, reject }));
  }

  private async process(taken: Waiting[]): Promise<void> {
    const formed = this.forming.then(() => this.form(taken));
    this.forming = formed.catch(() => undefined);
    let groups: Group[];
    try {
      groups = await formed;
    } catch (err) {
      this.logger.warn({ err }, 'could not group deliveries; each is processed alone');
      for (const w of taken) answerAlone(w);
      return;
    }
    for (const { members, settle } of groups) {
      let results = new Map<number, ProcessResult>();
      try {
        const release = await this.options.pace.acquire();
        try {
          results = await processPedidoGroup(this.db, this.deps, new Map(members.map(({ w }) => [w.id, w.attempt])));
        } catch (err) {
          this.logger.warn({ err, deliveries: members.length }, 'a group of deliveries failed; each is processed alone');
        } finally {
          release();
        }
        this.options.onGroup?.(members.length, results.size);
      } finally {
        settle(results);
      }
    }
  }

  /**
   * The groups of `taken`: orders of one integration still `recibida`, the first delivery of each
   * order with none before it under way, in id order, at most `maxGroup` each; a group of one is
   * no group. Every delivery of an order is queued behind the order's earlier ones; the others
   * are processed alone at once.
   */
  private async form(taken: Waiting[]): Promise<Group[]> {
    const byId = new Map(taken.map((w) => [w.id, w]));
    const heads = await entregaHeads(this.db, [...byId.keys()]);
    const unordered = new Set(taken);
    const ordered: Member[] = [];
    const candidates = new Map<number, Member[]>();
    const orders = new Set<string>();
    for (const head of heads) {
      const w = byId.get(head.id)!;
      if (head.estado !== 'recibida' || head.recurso !== 'pedido' || head.referencia === null) continue;
      const order = `${head.integracion_id}:${head.referencia}`;
      unordered.delete(w);
      ordered.push({ w, order });
      if (head.tema === 'refunds/create' || orders.has(order) || this.tails.has(order)) continue;
      orders.add(order);
      candidates.set(head.integracion_id, [...(candidates.get(head.integracion_id) ?? []), { w, order }]);
    }
    const groups: Group[] = [];
    const inGroup = new Map<Waiting, Promise<Map<number, ProcessResult>>>();
    for (const members of [...candidates.values()].flatMap((ms) => chunks(ms, this.options.maxGroup))) {
      if (members.length < 2) continue;
      let settle!: Group['settle'];
      const results = new Promise<Map<number, ProcessResult>>((resolve) => (settle = resolve));
      for (const { w } of members) inGroup.set(w, results);
      groups.push({ members, settle });
    }
    for (const w of unordered) answerAlone(w);
    for (const { w, order } of ordered) {
      const results = inGroup.get(w);
      this.queue(order, w, results ? async () => (await results).get(w.id) ?? w.alone() : w.alone);
    }
    return groups;
  }

  /** Runs `w` once its order's earlier deliveries are over; its later ones wait for it. */
  private queue(order: string, w: Waiting, run: () => Promise<ProcessResult>): void {
    const before = this.tails.get(order) ?? Promise.resolve();
    const over = before.then(run).then(w.resolve, w.reject);
    this.tails.set(order, over);
    void over.then(() => {
      if (this.tails.get(order) === over) this.tails.delete(order);
    });
  }
}
