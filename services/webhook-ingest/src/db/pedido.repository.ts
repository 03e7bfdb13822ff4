import { sql, type QueryCreator, type Transaction } from 'kysely';
import type { OrigenPedido, WebhookDb } from './tables';

/**
 * What we applied of one platform order, locked: its deliveries apply one at a time. One
 * statement: a new order's row is created, a known one is locked by the no-op update (which,
 * like `for update`, waits for a delivery holding it and then reads what that one committed).
 */
export async function lockPedido(
  trx: Transaction<WebhookDb>,
  empresaId: number,
  referencia: string,
  /** The delivery's path and integration, recorded when it is the order's first. */
  first: { origen: OrigenPedido; integracion_id: number },
) {
  return trx
    .insertInto('pedidos')
    .values({ empresa_id: empresaId, referencia, estado_plataforma: null, version: null, id_venta: null, ...first })
    .onConflict((oc) => oc.columns(['empresa_id', 'referencia']).doUpdateSet({ referencia: (eb) => eb.ref('excluded.referencia') }))
    .returning(['version', 'id_venta', 'cancelado', 'lineas', 'reembolsos'])
    .executeTakeFirstOrThrow();
}

export type PedidoRow = Awaited<ReturnType<typeof lockPedido>>;

/**
 * `lockPedido` for several orders of one company in one statement, in reference order (as every
 * group locks them), each created when new with its delivery's path. Answers each by reference.
 */
export async function lockPedidos(
  trx: Transaction<WebhookDb>,
  empresaId: number,
  orders: ReadonlyArray<{ referencia: string; origen: OrigenPedido; integracion_id: number }>,
): Promise<Map<string, PedidoRow>> {
  if (orders.length === 0) return new Map();
  const sorted = [...orders].sort((a, b) => (a.referencia < b.referencia ? -1 : a.referencia > b.referencia ? 1 : 0));
  const rows = await trx
    .insertInto('pedidos')
    .values(sorted.map((o) => ({ empresa_id: empresaId, estado_plataforma: null, version: null, id_venta: null, ...o })))
    .onConflict((oc) => oc.columns(['empresa_id', 'referencia']).doUpdateSet({ referencia: (eb) => eb.ref('excluded.referencia') }))
    .returning(['referencia', 'version', 'id_venta', 'cancelado', 'lineas', 'reembolsos'])
    .execute();
  return new Map(rows.map(({ referencia, ...row }) => [referencia, row]));
}

/** Changes to a platform order's row, written by the statement that finishes its delivery. */
export interface PedidoUpdate {
  empresa_id: number;
  referencia: string;
  changes: {
    estado_plataforma?: string;
    version?: Date | null;
    id_venta?: number | null;
    cancelado?: boolean;
    lineas?: Array<string | null>;
    reembolsos?: string[];
    lineas_pendientes?: boolean;
  };
}

export function updatePedido(db: QueryCreator<WebhookDb>, { empresa_id, referencia, changes }: PedidoUpdate) {
  const { lineas, ...rest } = changes;
  return db
    .updateTable('pedidos')
    .set({ ...rest, ...(lineas ? { lineas: JSON.stringify(lineas) } : {}), updated_at: sql<Date>`now()` })
    .where('empresa_id', '=', empresa_id)
    .where('referencia', '=', referencia);
}
