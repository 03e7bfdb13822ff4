import { randomUUID } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import { Bus } from '@erp/bus';
import { inventorySubjects, streamName, type TenantContext } from '@erp/contracts';
import { createLogger, loadConfig, startService, type RunningService } from '@erp/runtime';
import { isolate, serviceEnv, type Isolation } from '@erp/testing';
import type { Kysely } from 'kysely';
import { InventoryConfig, inventoryService } from '../src';
import type { InventoryDb } from '../src/db/tables';

/** The inventory service in this process against an isolated database and subject prefix, plus a client bus. */
export interface InventoryHarness {
  iso: Isolation;
  service: RunningService<InventoryConfig>;
  /** The service's own Kysely, bound to its schema: for checking the ledger directly. */
  db: Kysely<InventoryDb>;
  bus: Bus;
  stop(): Promise<void>;
}

export async function startInventory(label: string, env: Record<string, string> = {}): Promise<InventoryHarness> {
  const iso = await isolate(label);
  const config = loadConfig(InventoryConfig, serviceEnv(iso, { DB_POOL_MAX: '5', REQUEST_TIMEOUT_MS: '5000', ...env }));
  const service = await startService(inventoryService(config), { migrateOnStart: true });
  const bus = await Bus.connect({
    servers: iso.natsUrl,
    prefix: iso.subjectPrefix,
    name: `${label}-client`,
    logger: createLogger(label, 'silent'),
  });
  return {
    iso,
    service,
    db: service.ctx.db as Kysely<InventoryDb>,
    bus,
    stop: async () => {
      await bus.drain();
      await service.stop();
      const admin = await Bus.connect({
        servers: iso.natsUrl,
        prefix: iso.subjectPrefix,
        name: `${label}-cleanup`,
        logger: createLogger(label, 'silent'),
      });
      const jsm = await jetstreamManager(admin.nc);
      await jsm.streams.delete(streamName(iso.subjectPrefix)).catch(() => undefined);
      await admin.drain();
      await iso.drop();
    },
  };
}

export function tenant(empresaId: number, venderSinStock: boolean): TenantContext {
  return {
    requestId: `test-${randomUUID()}`,
    empresa: { id: empresaId, nombre: `Empresa ${empresaId}`, iva: '13', venderSinStock },
    usuario: null,
  };
}

type RefMaps = { sucursales: Record<string, number>; bodegas: Record<string, number>; productos: Record<string, number> };

/** Loads branches, warehouses and products of one company through the back-office subject. */
export async function seedCompany(bus: Bus, empresaId: number, productos: ReadonlyArray<Record<string, unknown>>): Promise<RefMaps> {
  return bus.request(
    inventorySubjects,
    'inventory.admin.seed',
    {
      empresa_id: empresaId,
      sucursales: [
        {
          ref: 'centro',
          nombre: 'Sucursal Centro',
          bodegas: [
            { ref: 'principal', nombre: 'Bodega Principal' },
            { ref: 'reserva', nombre: 'Bodega Reserva' },
          ],
        },
        { ref: 'cerrada', nombre: 'Sucursal Cerrada', activo: false, bodegas: [{ ref: 'vieja', nombre: 'Bodega Vieja' }] },
      ],
      productos: productos as never,
    },
    { requestId: `seed-${empresaId}` },
  );
}

export async function stockOf(db: Kysely<InventoryDb>, productoId: number, bodegaId: number): Promise<string | undefined> {
  const row = await db
    .selectFrom('inventarios')
    .select('stock')
    .where('producto_id', '=', productoId)
    .where('bodega_id', '=', bodegaId)
    .executeTakeFirst();
  return row?.stock;
}

export async function movementsOf(db: Kysely<InventoryDb>, productoId: number) {
  return db
    .selectFrom('movimientos')
    .select(['tipo', 'cantidad', 'stock_resultante', 'clave', 'bodega_id'])
    .where('producto_id', '=', productoId)
    .orderBy('id')
    .execute();
}
