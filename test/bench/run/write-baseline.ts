import { createHash } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { ZodError } from 'zod';
import { createLogger } from '@erp/runtime';
import { wireErrorOf, type Bus } from '@erp/bus';
import { AppError, SaleCreateRequest, SaleUpdateRequest, inventorySubjects, type TenantContext } from '@erp/contracts';
import { findCredential } from '../../../services/gateway/src/db/credentials.repository';
import type { GatewayDb } from '../../../services/gateway/src/db/tables';
import type { InventoryDb } from '../../../services/inventory/src/db/tables';
import { reserveStock, reserveStockMany } from '../../../services/inventory/src/flows/reservas.flow';
import { resolveProductsHandler } from '../../../services/inventory/src/handlers/resolve-products.handler';
import { resolveSucursalHandler } from '../../../services/inventory/src/handlers/resolve-sucursal.handler';
import { adjustStock } from '../../../services/inventory/src/flows/adjust-stock.flow';
import type { SalesDb } from '../../../services/sales/src/db/tables';
import { createVenta } from '../../../services/sales/src/flows/create-venta.flow';
import type { InventoryPort } from '../../../services/sales/src/ports/inventory.port';
import { updateVenta } from '../../../services/sales/src/flows/update-venta.flow';
import { benchApiKey } from '../data/plan';

/** What a write route answers: the status and the data of the envelope. */
export interface WriteAnswer {
  status: number;
  data: unknown;
}

export type WriteRoute = (method: string, path: string, body: string) => Promise<WriteAnswer> | undefined;

/**
 * The baseline of the write scenarios: `POST /sales` and `PUT /sales/{id}` run the sales
 * service's own flows with inventory's own functions in the same process, on one pool, with the
 * sale and its stock in one transaction: the same statements as the services (stock, ledger,
 * outbox rows and summaries included), without the gateway, NATS, the second transaction of
 * inventory or the outbox relays. The ratio to it prices the microservice path of a write.
 */
export async function writeRoutes(
  dbs: { gateway: Kysely<GatewayDb>; inventory: Kysely<InventoryDb>; sales: Kysely<SalesDb> },
  empresa: { id: number; clave: string },
): Promise<WriteRoute> {
  const credential = await findCredential(dbs.gateway, createHash('sha256').update(benchApiKey(empresa.clave)).digest());
  if (credential?.empresa.id !== empresa.id) throw new Error(`the bench company ${empresa.clave} (${empresa.id}) has no active API key`);
  let requests = 0;
  const contextOf = (): TenantContext => ({
    requestId: `baseline-${++requests}`,
    empresa: credential.empresa,
    usuario: credential.usuario,
  });
  // The flows log through the bus only when an undo fails; nothing here is sent over it.
  const bus = { logger: createLogger('bench-baseline', 'warn') } as unknown as Bus;
  const deps = {
    db: dbs.sales,
    bus,
    inventory: sharedTransactionInventory(dbs.inventory),
    inventoryIn: (trx: Transaction<SalesDb>) => sharedTransactionInventory(dbs.inventory, trx),
  };

  return (method, path, body) => {
    const update = /^\/sales\/(\d+)$/.exec(path);
    if (method === 'POST' && path === '/sales') {
      return answer(201, () =>
        createVenta(deps, SaleCreateRequest.parse({ ...JSON.parse(body), origen: 'api' }), contextOf()).then((r) => r.venta),
      );
    }
    if (method === 'PUT' && update) {
      return answer(200, () =>
        updateVenta(deps, SaleUpdateRequest.parse({ id: Number(update[1]), cambios: JSON.parse(body) }), contextOf()),
      );
    }
    return undefined;
  };
}

async function answer(status: number, run: () => Promise<unknown>): Promise<WriteAnswer> {
  try {
    return { status, data: await run() };
  } catch (err) {
    if (err instanceof AppError)
      return { status: err.code === 'NOT_FOUND' ? 404 : 422, data: { error: err.message, details: err.details } };
    if (err instanceof ZodError) return { status: 422, data: { error: 'Datos inválidos', details: err.issues } };
    throw err;
  }
}

/**
 * Inventory reached in process: resolutions through its handlers and, given the sales transaction
 * `trx`, the reservation and the adjustment of stock (and an update's resolutions) in it (the same
 * connection, inventory's schema), so a sale and its stock commit or roll back together. A failed
 * sale's reservation is rolled back with it: there is nothing to release.
 */
function sharedTransactionInventory(db: Kysely<InventoryDb>, trx?: Transaction<SalesDb>): InventoryPort {
  // In the sale's transaction when there is one: a pool connection held by it never waits for another.
  const inTransaction = trx?.withSchema('inventory') as unknown as Transaction<InventoryDb> | undefined;
  const stockDb = () => {
    if (!inTransaction) throw new Error('the baseline moves stock only inside a sale’s transaction');
    return inTransaction;
  };
  const options = (ctx: TenantContext) => ({ empresaId: ctx.empresa.id, allowNegative: ctx.empresa.venderSinStock });
  return {
    resolve: (ctx, req) =>
      resolveProductsHandler(inTransaction ?? db)(inventorySubjects['inventory.product.resolve'].request.parse(req), ctx),
    resolveSucursal: (ctx, req) =>
      resolveSucursalHandler(inTransaction ?? db)(inventorySubjects['inventory.sucursal.resolve'].request.parse(req), ctx),
    reserve: (ctx, req) =>
      reserveStock(stockDb(), inventorySubjects['inventory.stock.reserve'].request.parse(req), { ...options(ctx), checkAfterMs: 60_000 }),
    reserveMany: async (ctx, req) => {
      const resultados = await reserveStockMany(stockDb(), inventorySubjects['inventory.stock.reserve-many'].request.parse(req).reservas, {
        ...options(ctx),
        checkAfterMs: 60_000,
      });
      return {
        resultados: resultados.map((r) =>
          'error' in r ? { clave: r.clave, error: wireErrorOf(r.error, () => createLogger('bench-baseline', 'warn')) } : r,
        ),
      };
    },
    release: async () => undefined,
    // A change that dies rolls its adjustment back with it: no revision is left to revert.
    revert: async (_ctx, req) => ({ clave: req.clave, existia: false, revertido: false, movimientos: [] }),
    adjust: (ctx, req) => adjustStock(stockDb(), inventorySubjects['inventory.stock.adjust'].request.parse(req), options(ctx)),
  };
}
