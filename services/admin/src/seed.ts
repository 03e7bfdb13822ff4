import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Bus } from '@erp/bus';
import { gatewaySubjects, inventorySubjects, webhookSubjects, type RequestContext } from '@erp/contracts';
import { seedReturns } from './seed-returns';
import { seedSales } from './seed-sales';
import type { RefMap } from './refs';

/** The fixture document (docs/fixtures.md). Entities are validated by the service that owns them. */
export const Fixture = z.object({
  empresas: z.array(
    z
      .object({
        ref: z.string().min(1),
        clave: z.string().min(1).optional(),
        nombre: z.string().min(1),
        activo: z.boolean().default(true),
        vender_sin_stock: z.boolean().default(true),
        iva: z.number().min(0).max(100).default(13),
        usuarios: z.array(z.unknown()).default([]),
        api_keys: z.array(z.unknown()).default([]),
        sucursales: z.array(z.unknown()).default([]),
        productos: z.array(z.unknown()).default([]),
      })
      .passthrough(),
  ),
});
export type Fixture = z.input<typeof Fixture>;

/** An integration's webhook token in clear, with its id and the path to give the platform. */
export type WebhookToken = { id: number; token: string; path: string };

export interface SeededEmpresa {
  id: number;
  existing: boolean;
  api_keys: Record<string, string>;
  [kind: string]: RefMap | Record<string, string> | Record<string, WebhookToken> | number | boolean;
}

export interface SeedOutput {
  empresas: Record<string, SeededEmpresa>;
  /** Fixture sections that no service loads yet, by company ref. */
  skipped: Record<string, string[]>;
}

/** Sections the loader knows how to load today. */
const LOADED = new Set([
  'ref',
  'clave',
  'nombre',
  'activo',
  'vender_sin_stock',
  'iva',
  'usuarios',
  'api_keys',
  'sucursales',
  'productos',
  'documentos',
  'canales',
  'clientes',
  'ventas',
  'devoluciones',
  'integraciones',
]);

/**
 * Loads a fixture through the services' back-office subjects, each service writing its own
 * schema. A company whose `clave` exists is left untouched and reported with its recorded ids.
 */
export async function seedFixture(bus: Bus, input: unknown): Promise<SeedOutput> {
  const fixture = Fixture.parse(input);
  const ctx: RequestContext = { requestId: `seed-${randomUUID()}` };
  const output: SeedOutput = { empresas: {}, skipped: {} };

  for (const empresa of fixture.empresas) {
    const gateway = await bus.request(
      gatewaySubjects,
      'gateway.admin.empresa.seed',
      {
        clave: empresa.clave,
        nombre: empresa.nombre,
        activo: empresa.activo,
        vender_sin_stock: empresa.vender_sin_stock,
        iva: empresa.iva,
        usuarios: empresa.usuarios as never,
        api_keys: empresa.api_keys as never,
      },
      ctx,
    );
    if (gateway.existing) {
      output.empresas[empresa.ref] = { ...gateway.refs, id: gateway.id, existing: true, api_keys: gateway.api_keys };
      continue;
    }
    const inventory = await bus.request(
      inventorySubjects,
      'inventory.admin.seed',
      { empresa_id: gateway.id, sucursales: empresa.sucursales as never, productos: empresa.productos as never },
      ctx,
    );
    const refs: Record<string, RefMap> = { usuarios: gateway.usuarios, ...inventory };
    Object.assign(refs, await seedSales(bus, gateway.id, empresa, refs, ctx));
    Object.assign(refs, await seedReturns(bus, gateway.id, empresa, refs, ctx));
    // Integrations point at users, branches, warehouses, documents and channels: seeded last.
    const integraciones =
      Array.isArray(empresa.integraciones) && empresa.integraciones.length > 0
        ? (
            await bus.request(
              webhookSubjects,
              'webhooks.admin.seed',
              { empresa_id: gateway.id, refs, integraciones: empresa.integraciones as never },
              ctx,
            )
          ).integraciones
        : {};
    if (Object.keys(integraciones).length > 0)
      refs.integraciones = Object.fromEntries(Object.entries(integraciones).map(([ref, i]) => [ref, i.id]));
    await bus.request(gatewaySubjects, 'gateway.admin.empresa.refs.record', { empresa_id: gateway.id, refs }, ctx);
    output.empresas[empresa.ref] = { ...refs, id: gateway.id, existing: false, api_keys: gateway.api_keys, integraciones };
    const skipped = Object.keys(empresa).filter((k) => !LOADED.has(k) && Array.isArray(empresa[k]) && (empresa[k] as unknown[]).length > 0);
    if (skipped.length > 0) output.skipped[empresa.ref] = skipped;
  }
  return output;
}
