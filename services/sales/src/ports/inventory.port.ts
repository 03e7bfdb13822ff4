import type { Transaction } from 'kysely';
import type { Bus } from '@erp/bus';
import { inventorySubjects, type ReplyOf, type RequestOf, type TenantContext } from '@erp/contracts';
import type { SalesDb } from '../db/tables';

type Req<S extends keyof typeof inventorySubjects> = RequestOf<typeof inventorySubjects, S>;
type Reply<S extends keyof typeof inventorySubjects> = ReplyOf<typeof inventorySubjects, S>;

/**
 * What the sales flows ask of inventory. `trx` is the sales transaction the step runs in, when it
 * runs in one: over NATS inventory works in a transaction of its own and ignores it; an
 * implementation that shares the database (the benchmark's baseline) runs the step in it.
 */
export interface InventoryPort {
  /** The steps run in the sales transaction they are given (so a reservation is taken inside it). */
  readonly sharesTransaction: boolean;
  resolve(
    ctx: TenantContext,
    req: Req<'inventory.product.resolve'>,
    trx?: Transaction<SalesDb>,
  ): Promise<Reply<'inventory.product.resolve'>>;
  resolveSucursal(
    ctx: TenantContext,
    req: Req<'inventory.sucursal.resolve'>,
    trx?: Transaction<SalesDb>,
  ): Promise<Reply<'inventory.sucursal.resolve'>>;
  reserve(ctx: TenantContext, req: Req<'inventory.stock.reserve'>, trx?: Transaction<SalesDb>): Promise<unknown>;
  /** Reservations of many sales, decided in order; one refused is its result. */
  reserveMany(
    ctx: TenantContext,
    req: Req<'inventory.stock.reserve-many'>,
    trx?: Transaction<SalesDb>,
  ): Promise<Reply<'inventory.stock.reserve-many'>>;
  release(ctx: TenantContext, req: Req<'inventory.stock.release'>): Promise<unknown>;
  adjust(ctx: TenantContext, req: Req<'inventory.stock.adjust'>, trx?: Transaction<SalesDb>): Promise<Reply<'inventory.stock.adjust'>>;
  revert(ctx: TenantContext, req: Req<'inventory.stock.revert'>): Promise<Reply<'inventory.stock.revert'>>;
}

export function busInventory(bus: Bus): InventoryPort {
  return {
    sharesTransaction: false,
    resolve: (ctx, req) => bus.request(inventorySubjects, 'inventory.product.resolve', req, ctx),
    resolveSucursal: (ctx, req) => bus.request(inventorySubjects, 'inventory.sucursal.resolve', req, ctx),
    reserve: (ctx, req) => bus.request(inventorySubjects, 'inventory.stock.reserve', req, ctx),
    reserveMany: (ctx, req) => bus.request(inventorySubjects, 'inventory.stock.reserve-many', req, ctx),
    release: (ctx, req) => bus.request(inventorySubjects, 'inventory.stock.release', req, ctx),
    adjust: (ctx, req) => bus.request(inventorySubjects, 'inventory.stock.adjust', req, ctx),
    revert: (ctx, req) => bus.request(inventorySubjects, 'inventory.stock.revert', req, ctx),
  };
}
