import type { Bus } from '@erp/bus';
import { SaleCreateRequest, type TenantContext } from '@erp/contracts';
import { harness, type Harness, type HarnessOptions } from '@erp/testing';
import type { Kysely } from 'kysely';
import { migrations } from '../src/db/migrations';
import { SALES_SCHEMA, type SalesDb } from '../src/db/tables';
import { adminHandlers } from '../src/handlers/admin.handlers';

/** The acting user of the sales tests. */
export const ANA = { id: 9, nombre: 'Ana' };

/** A harness with the sales schema migrated and `db` bound to it, for tests that call handlers directly. */
export function salesHarness(label: string, options: Omit<HarnessOptions, 'schema' | 'migrations'> = {}): Promise<Harness<SalesDb>> {
  return harness<SalesDb>(label, { schema: SALES_SCHEMA, migrations, ...options });
}

type SeedRequest = Parameters<ReturnType<typeof adminHandlers>['sales.admin.seed']>[0];

/** Document type "Factura" (F-1, F-2, …) of branch 1. */
export const FACTURA = { ref: 'f', nombre: 'Factura', id_sucursal: 1, prefijo: 'F-', correlativo: 1, activo: true, solo_cotizacion: false };

/**
 * Seeds the company of `ctx` through the back office: the Factura document type, the Tienda
 * channel, and the documents and customers a test adds. Answers the ids by ref, the Factura's and
 * the Tienda's apart.
 */
export async function seedSales(
  db: Kysely<SalesDb>,
  bus: Bus,
  ctx: TenantContext,
  more: { documentos?: SeedRequest['documentos']; clientes?: SeedRequest['clientes'] } = {},
) {
  const seeded = await adminHandlers(db, bus)['sales.admin.seed'](
    {
      empresa_id: ctx.empresa.id,
      documentos: [FACTURA, ...(more.documentos ?? [])],
      canales: [{ ref: 't', nombre: 'Tienda', activo: true }],
      clientes: more.clientes ?? [],
    },
    ctx,
  );
  return { ...seeded, documentoId: seeded.documentos.f!, canalId: seeded.canales.t! };
}

/** A sale of one unit of product 5 in warehouse 2 of branch 1, Completada on 2026-02-01, under the seeded Factura and Tienda. */
export function saleRequest(seeded: { documentoId: number; canalId: number }, over: Record<string, unknown> = {}): SaleCreateRequest {
  return SaleCreateRequest.parse({
    fecha: '2026-02-01',
    estado: 'Completada',
    id_sucursal: 1,
    id_bodega: 2,
    id_documento: seeded.documentoId,
    id_canal: seeded.canalId,
    detalles: [{ id_producto: 5, cantidad: 1 }],
    ...over,
  });
}
