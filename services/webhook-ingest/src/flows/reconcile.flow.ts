import { createHash, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Logger } from '@erp/bus';
import type { EstadoSuscripcion, PasadaConciliacion } from '@erp/contracts';
import { finishPass, knownPedidos, renewLease, type ClaimedPass } from '../db/conciliacion.repository';
import { insertEntregas } from '../db/entrega.repository';
import type { WebhookDb } from '../db/tables';
import { credentialsContext, openSecrets, type Keyring, type ShopSecrets } from '../domain/credentials';
import { openShop, type CallPolicy, type PedidoStamp, type TiendaApi, type PedidoTienda } from '../ports/shops';

export interface ReconcileDeps {
  db: Kysely<WebhookDb>;
  keyring: Keyring;
  policy: CallPolicy;
  /** The public base URL the shops deliver to; undefined: subscriptions are not checked. */
  webhookBaseUrl: string | undefined;
  overlapMs: number;
  intervalMs: number;
  leaseMs: number;
  /** This replica's name in the leases it holds. */
  owner: string;
  /** The shop's client (tests may put another in its place). */
  openTienda?: (claimed: ClaimedPass, secrets: ShopSecrets) => TiendaApi;
  /** Deliveries were stored: their events wait in the outbox. */
  onStored: () => void;
  logger: Logger;
}

/** How soon a failed pass is tried again: 30 s, doubling with each failure in a row, never later than the interval. */
export const retryAfterFailureMs = (failures: number, intervalMs: number) => Math.min(intervalMs, 30_000 * 2 ** Math.min(failures, 10));

/**
 * One reconciliation pass of one integration whose lease this replica holds: every order the
 * shop changed since the watermark (less the overlap) that we do not hold at that version goes
 * to the same intake as a webhook delivery, as a delivery of origin `conciliacion` (dedup key:
 * the order and its version, so a pass repeated over the same orders stores nothing twice);
 * then our webhook subscriptions are checked and restored. The watermark moves only when the
 * whole read succeeded; the lease is renewed after every page and the pass stops if it was lost.
 */
export async function reconcileIntegracion(deps: ReconcileDeps, claimed: ClaimedPass): Promise<PasadaConciliacion> {
  const { db, logger } = deps;
  const id = claimed.integracion_id;
  const tally: Tally = { leidos: 0, entregados: 0, nuevos: 0, suscripcion: null, marca: claimed.marca };
  try {
    await runPass(deps, claimed, tally);
    await finishPass(db, id, deps.owner, {
      correcta: true,
      error: null,
      marca: tally.marca,
      leidos: tally.leidos,
      recuperados: tally.nuevos,
      suscripcion: tally.suscripcion,
      siguienteEnMs: deps.intervalMs,
    });
    return pasada(id, 'correcta', null, tally);
  } catch (err) {
    if (err instanceof LeaseLost) {
      logger.warn({ integracion: id }, 'reconciliation lease lost during the pass; another replica carries on');
      return pasada(id, 'ocupada', null, tally);
    }
    const error = (err as Error).message.slice(0, 500);
    logger.warn({ integracion: id, err: error }, 'reconciliation pass failed');
    // What was stored stays stored; the watermark stays where the last whole read left it.
    await finishPass(db, id, deps.owner, {
      correcta: false,
      error,
      marca: claimed.marca,
      leidos: tally.leidos,
      recuperados: tally.nuevos,
      suscripcion: tally.suscripcion,
      siguienteEnMs: retryAfterFailureMs(claimed.fallos_seguidos, deps.intervalMs),
    });
    return pasada(id, 'fallida', error, tally);
  }
}

/** What a pass has done so far: kept when it fails or loses its lease halfway. */
interface Tally {
  leidos: number;
  entregados: number;
  nuevos: number;
  suscripcion: EstadoSuscripcion | null;
  /** The newest version read: the watermark once the whole read succeeded. */
  marca: Date | null;
}

const pasada = (id: number, resultado: PasadaConciliacion['resultado'], error: string | null, tally: Tally): PasadaConciliacion => ({
  id_integracion: id,
  resultado,
  error,
  pedidos_leidos: tally.leidos,
  pedidos_entregados: tally.entregados,
  pedidos_nuevos: tally.nuevos,
  suscripcion: tally.suscripcion ?? 'desconocida',
});

/** The pass's work with the shop: the orders read and stored, then the subscriptions checked. Throws what failed the pass. */
async function runPass(deps: ReconcileDeps, claimed: ClaimedPass, tally: Tally): Promise<void> {
  const secrets = openSecrets(deps.keyring, claimed.tienda_credenciales, credentialsContext(claimed.empresa_id, claimed.plataforma));
  const tienda = (deps.openTienda ?? defaultTienda(deps.policy))(claimed, secrets);
  const pedidosFailed = await readPedidos(deps, claimed, tienda, tally);
  try {
    if (deps.webhookBaseUrl === undefined) tally.suscripcion = 'sin_url';
    else tally.suscripcion = await tienda.keepSubscriptions(new URL(secrets.ruta, deps.webhookBaseUrl).toString(), claimed.secreto);
  } catch (err) {
    // The orders' failure, when there was one, is the pass's.
    throw pedidosFailed ?? err;
  }
  if (tally.suscripcion === 'restaurada') deps.logger.warn({ integracion: claimed.integracion_id }, 'shop webhook subscription restored');
  if (pedidosFailed !== undefined) throw pedidosFailed;
}

/**
 * Reads the orders the shop changed since the watermark (less the overlap), renewing the lease
 * with every page, and stores those owed. Answers the read's failure, if it failed: the
 * subscriptions are kept alive even when the orders could not all be read.
 */
async function readPedidos(deps: ReconcileDeps, claimed: ClaimedPass, tienda: TiendaApi, tally: Tally): Promise<unknown> {
  const { db } = deps;
  const id = claimed.integracion_id;
  const since = new Date((claimed.marca ?? claimed.creada_at).getTime() - deps.overlapMs);
  let known: Known = new Map();
  try {
    tally.leidos = await tienda.pedidosChangedSince(since, {
      wanted: async (stamps) => {
        if (!(await renewLease(db, id, deps.owner, deps.leaseMs))) throw new LeaseLost();
        for (const s of stamps) if (!tally.marca || s.version > tally.marca) tally.marca = s.version;
        known = await knownPedidos(
          db,
          claimed.empresa_id,
          id,
          stamps.map((s) => s.referencia),
        );
        return new Set(stamps.filter((s) => owed(known.get(s.referencia), s)).map((s) => s.referencia));
      },
      onPage: async (pedidos) => {
        const stored = await intake(deps, claimed, pedidos, known);
        tally.entregados += stored.entregados;
        tally.nuevos += stored.nuevos;
      },
    });
    return undefined;
  } catch (err) {
    if (err instanceof LeaseLost) throw err;
    return err;
  }
}

class LeaseLost extends Error {}

const defaultTienda = (policy: CallPolicy) => (claimed: ClaimedPass, secrets: ShopSecrets) =>
  openShop(claimed.plataforma, claimed.tienda_url, secrets, policy);

type Known = Awaited<ReturnType<typeof knownPedidos>>;

/**
 * Whether an order listed at `version` is owed to the intake: not when we applied that version or
 * a newer one (unless a refund of it still lacks its lines), not when it was cancelled (terminal),
 * not while a delivery of it waits to be processed (that one brings it; a newer version comes in
 * the next pass).
 */
export function owed(k: Known extends Map<string, infer V> ? V | undefined : never, stamp: PedidoStamp): boolean {
  if (!k) return true;
  if (k.cancelado || k.esperando) return false;
  // A refund whose lines are still to come: the order is read again, with them.
  if (k.lineas_pendientes) return true;
  if (!k.version || k.version.getTime() < stamp.version.getTime()) return true;
  // Versions count seconds: a state reached within the second of the one we hold (its webhook lost) is owed too.
  return k.version.getTime() === stamp.version.getTime() && k.estado_plataforma !== null && k.estado_plataforma !== stamp.estado;
}

/**
 * Stores the orders read whole as deliveries of origin `conciliacion`. `nuevos`: orders never
 * seen by any path before, the webhooks that did not come.
 */
async function intake(deps: ReconcileDeps, claimed: ClaimedPass, pedidos: PedidoTienda[], known: Known) {
  const requestId = `conciliacion-${claimed.integracion_id}-${randomUUID()}`;
  const stored = await insertEntregas(
    deps.db,
    pedidos.map((o) => ({
      integracion_id: claimed.integracion_id,
      empresa_id: claimed.empresa_id,
      plataforma: claimed.plataforma,
      recurso: 'pedido' as const,
      tema: o.tema,
      // The order's version, and its content: the same version read again with a refund's lines is another delivery.
      clave_dedup: `conciliacion:${o.referencia}:${o.version.toISOString()}:${createHash('sha256').update(o.cuerpo).digest('hex').slice(0, 16)}`,
      referencia: o.referencia,
      origen: 'conciliacion' as const,
      headers: {},
      cuerpo: o.cuerpo,
      evento: { id: randomUUID(), context: { requestId }, trace: {} },
    })),
  );
  if (stored.size > 0) deps.onStored();
  const nuevos = pedidos.filter((o) => !known.get(o.referencia)?.visto).length;
  return { entregados: stored.size, nuevos };
}
