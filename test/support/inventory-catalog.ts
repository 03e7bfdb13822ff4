import { createDb, sql } from '@erp/db';
import type { SeedOutput } from '@erp/back-office';
import type { Stack } from './stack';

export const CATALOG_KEY_A = 'test_key_catalog_a_0123456789abcdef';
export const CATALOG_KEY_B = 'test_key_catalog_b_0123456789abcdef';

const inv = (bodega: string, stock: number, stock_minimo = 0) => ({ bodega, stock, stock_minimo, stock_maximo: 100 });

/**
 * A catalog whose every list and summary answer is known. Company A has seven live products
 * (one inactive, one service, one with stock only in a warehouse of an inactive branch, two
 * price ties) and one product soft-deleted after seeding; company B has a lookalike laptop.
 * Names sort the same under any collation.
 */
export function catalogFixture(): unknown {
  const sucursales = [
    {
      ref: 'centro',
      nombre: 'Sucursal Centro',
      bodegas: [
        { ref: 'principal', nombre: 'Bodega Principal' },
        { ref: 'reserva', nombre: 'Bodega Reserva' },
      ],
    },
    { ref: 'norte', nombre: 'Sucursal Norte', activo: false, bodegas: [{ ref: 'cerrada', nombre: 'Bodega Cerrada' }] },
  ];
  const empresa = (ref: string, key: string, productos: unknown[]) => ({
    ref,
    nombre: `Catalogo ${ref.toUpperCase()}`,
    usuarios: [{ ref: 'admin', nombre: 'Admin', rol: 'Administrador' }],
    api_keys: [{ ref: 'main', usuario: 'admin', key }],
    sucursales,
    productos,
  });
  return {
    empresas: [
      empresa('a', CATALOG_KEY_A, [
        {
          ref: 'p1',
          nombre: 'Audifonos Pro',
          codigo: 'AUD-001',
          categoria: 'Electronicos',
          marca: 'Sony',
          precio: 59.9,
          costo: 30,
          costo_promedio: 30,
          inventarios: [inv('principal', 10, 2)],
        },
        {
          ref: 'p2',
          nombre: 'Cable HDMI 2m',
          codigo: 'CAB-002',
          categoria: 'Accesorios',
          marca: 'Generica',
          precio: 8.5,
          costo: 2.1,
          costo_promedio: 2.1,
          inventarios: [inv('principal', 0, 5)],
        },
        {
          ref: 'p3',
          nombre: 'Laptop 14',
          codigo: 'LAP-014',
          barcode: '7700000000014',
          categoria: 'Electronicos',
          marca: 'Acer',
          precio: 649.99,
          costo: 480,
          costo_anterior: 470,
          costo_promedio: 475.25,
          inventarios: [inv('principal', 3, 5), inv('reserva', 2.5, 1)],
        },
        {
          ref: 'p4',
          nombre: 'Mouse Optico',
          codigo: 'MOU-100',
          categoria: 'Accesorios',
          marca: 'Logitech',
          precio: 15,
          costo: 7,
          costo_promedio: 7,
          enable: 0,
          inventarios: [inv('principal', 4, 1)],
        },
        { ref: 'p5', nombre: 'Soporte Tecnico', codigo: 'SRV-001', categoria: 'Servicios', tipo: 'Servicio', precio: 25 },
        {
          ref: 'p6',
          nombre: 'Teclado 50% Off',
          codigo: 'TEC_50',
          marca: 'Logitech',
          precio: 20,
          costo: 12,
          costo_promedio: 12,
          inventarios: [inv('principal', 0), inv('cerrada', 7)],
        },
        {
          ref: 'p7',
          nombre: 'Mochila Urbana',
          codigo: 'MOC-7',
          categoria: 'Accesorios',
          marca: 'Sony',
          precio: 20,
          costo: 12,
          costo_promedio: 20.5,
          inventarios: [inv('principal', 1.25, 0.5)],
        },
        {
          ref: 'p8',
          nombre: 'Zapato Borrado',
          codigo: 'ZAP-8',
          categoria: 'Calzado',
          marca: 'Sony',
          precio: 1,
          costo_promedio: 1,
          inventarios: [inv('principal', 100)],
        },
      ]),
      empresa('b', CATALOG_KEY_B, [
        {
          ref: 'p1',
          nombre: 'Laptop 14',
          codigo: 'LAP-014',
          categoria: 'Electronicos',
          marca: 'Acer',
          precio: 700,
          costo_promedio: 500,
          inventarios: [inv('principal', 9)],
        },
      ]),
    ],
  };
}

export interface Catalog {
  seeded: SeedOutput;
  /** Company A's product id by ref. */
  a: Record<string, number>;
  b: Record<string, number>;
}

/** Seeds the catalog and soft-deletes A's `p8` the way the back office would. */
export async function seedCatalog(stack: Stack): Promise<Catalog> {
  const seeded = await stack.seed(catalogFixture());
  const a = seeded.empresas.a!.productos as Record<string, number>;
  const b = seeded.empresas.b!.productos as Record<string, number>;
  const db = createDb<unknown>({ connectionString: stack.iso.databaseUrl, max: 1 });
  try {
    await sql`update inventory.productos set deleted_at = now() where id = ${a.p8}`.execute(db);
  } finally {
    await db.destroy();
  }
  return { seeded, a, b };
}
