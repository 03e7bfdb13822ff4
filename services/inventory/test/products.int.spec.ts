import type { Kysely } from 'kysely';
import { InventoryListRequest, Product, inventorySubjects, isAppError } from '@erp/contracts';
import { tenant, type Harness } from '@erp/testing';
import { findProductoJson } from '../src/db/producto-json.repository';
import { listProductos } from '../src/db/producto-list.repository';
import { findProductoWithStock } from '../src/db/producto-read.repository';
import type { InventoryDb } from '../src/db/tables';
import { seedCompany, startInventory } from './inventory.factories';

describe('the catalog over the bus: product list, products, branches and warehouses', () => {
  let h: Harness<InventoryDb>;
  let statements: string[];
  let counted: Kysely<InventoryDb>;

  beforeAll(async () => {
    h = await startInventory('list');
    const productos = Array.from({ length: 30 }, (_, i) => ({
      ref: `p${i}`,
      nombre: `Producto ${String(i).padStart(2, '0')}`,
      codigo: `P-${i}`,
      precio: '1',
      inventarios: [
        { bodega: 'principal', stock: i },
        { bodega: 'reserva', stock: 0 },
        { bodega: 'vieja', stock: 5 },
      ],
    }));
    await seedCompany(h.bus, 1, productos);
    statements = [];
    counted = h.openDb({ onQuery: (sql) => statements.push(sql) });
  });
  afterAll(() => h?.close());

  it('fetches a page and the stock of all its products in at most two statements, whatever the page size', async () => {
    for (const perPage of [1, 30]) {
      statements.length = 0;
      const { json, total } = await listProductos(
        counted,
        1,
        InventoryListRequest.parse({ per_page: perPage, con_stock: true, nombre: 'producto' }),
      );
      const rows = Product.array().parse(JSON.parse(json));
      expect(total).toBe(29);
      expect(rows).toHaveLength(Math.min(perPage, 29));
      expect(rows.every((r) => r.inventarios.length === 2)).toBe(true);
      expect(statements.length).toBeLessThanOrEqual(2);
    }
  });

  it('orders and counts the matches of a text filter as it orders and counts any other page', async () => {
    // Three letters select through the trigram index (matches collected first); two walk the ordering index.
    for (const order_by of ['nombre', 'codigo', 'precio', 'created_at'] as const) {
      for (const order_direction of ['asc', 'desc'] as const) {
        for (const page of [1, 2, 4]) {
          const ask = (nombre: string) =>
            listProductos(counted, 1, InventoryListRequest.parse({ nombre, order_by, order_direction, per_page: 9, page }));
          const [byTrigram, byWalk] = await Promise.all([ask('DUCTO'), ask('du')]);
          expect(byTrigram.total).toBe(30);
          expect(byTrigram).toEqual(byWalk);
        }
      }
    }
    const past = await listProductos(counted, 1, InventoryListRequest.parse({ nombre: 'producto 1', per_page: 20, page: 3 }));
    expect(past).toEqual({ total: 10, json: '[]' });
  });

  it('answers the page with the normalised filters over the bus', async () => {
    const page = await h.bus.request(
      inventorySubjects,
      'inventory.product.list',
      { per_page: 5, page: 2, order_by: 'codigo', enable: 1 },
      tenant(1),
    );
    expect(page.items.map((p) => p.codigo)).toEqual(['P-13', 'P-14', 'P-15', 'P-16', 'P-17']);
    expect(page.pagination).toMatchObject({ current_page: 2, total: 30, total_pages: 6, from: 6, to: 10 });
    expect(page.filters_applied).toEqual({ enable: 1 });
    const other = await h.bus.request(inventorySubjects, 'inventory.product.list', {}, tenant(2));
    expect(other.pagination).toMatchObject({ total: 0 });
  });

  it('creates a product once per code, with its category, and answers the existing one to a retry', async () => {
    const ctx = tenant(1);
    const request = { codigo: 'WEB-1', nombre: 'Gorra', precio: '12.5', categoria: 'Ropa', marca: 'Sol', porcentaje_impuesto: 0 };
    const [first, second] = await Promise.all([1, 2].map(() => h.bus.request(inventorySubjects, 'inventory.product.create', request, ctx)));
    expect([first!.creado, second!.creado].sort()).toEqual([false, true]);
    expect(second!.id).toBe(first!.id);
    const product = await h.bus.request(inventorySubjects, 'inventory.product.get', { id: first!.id }, ctx);
    expect(product).toMatchObject({
      codigo: 'WEB-1',
      nombre: 'Gorra',
      precio: 12.5,
      costo_promedio: 0,
      nombre_categoria: 'Ropa',
      marca: 'Sol',
      tipo: 'Producto',
      enable: 1,
      inventarios: [],
    });
    // Another company may use the same code.
    expect(await h.bus.request(inventorySubjects, 'inventory.product.create', request, tenant(2))).toMatchObject({ creado: true });
  });

  it('updates some fields, disables and enables, and refuses another company’s product or a code in use', async () => {
    const ctx = tenant(1);
    const { id } = await h.bus.request(
      inventorySubjects,
      'inventory.product.create',
      { codigo: 'WEB-2', nombre: 'Bufanda', precio: 9 },
      ctx,
    );
    const updated = await h.bus.request(
      inventorySubjects,
      'inventory.product.update',
      { id, cambios: { nombre: 'Bufanda larga', precio: '10.25', enable: 0, categoria: 'Ropa' } },
      ctx,
    );
    expect(updated).toMatchObject({ id, nombre: 'Bufanda larga', precio: 10.25, enable: 0, nombre_categoria: 'Ropa', codigo: 'WEB-2' });
    expect(
      await h.bus.request(inventorySubjects, 'inventory.product.update', { id, cambios: { enable: 1, categoria: null } }, ctx),
    ).toMatchObject({ enable: 1, nombre_categoria: null });

    const refused = async (work: Promise<unknown>) =>
      work.then(
        () => undefined,
        (e: unknown) => (isAppError(e) ? e.code : String(e)),
      );
    expect(await refused(h.bus.request(inventorySubjects, 'inventory.product.update', { id, cambios: { nombre: 'X' } }, tenant(2)))).toBe(
      'NOT_FOUND',
    );
    expect(await refused(h.bus.request(inventorySubjects, 'inventory.product.update', { id, cambios: { codigo: 'WEB-1' } }, ctx))).toBe(
      'CONFLICT',
    );
    expect(await refused(h.bus.request(inventorySubjects, 'inventory.product.update', { id, cambios: {} }, ctx))).toBe('VALIDATION_FAILED');
    expect(await refused(h.bus.request(inventorySubjects, 'inventory.product.update', { id, cambios: { precio: -1 } }, ctx))).toBe(
      'VALIDATION_FAILED',
    );
  });

  it('answers a product, alone and in pages, as the very JSON the write paths answer it', async () => {
    const ids = (
      await counted
        .selectFrom('productos')
        .select('id')
        .where('empresa_id', '=', 1)
        .where('deleted_at', 'is', null)
        .orderBy('nombre')
        .orderBy('id')
        .execute()
    ).map((r) => r.id);
    const written: string[] = [];
    for (const id of ids) {
      const product = Product.parse(await findProductoWithStock(counted, 1, id));
      expect(await findProductoJson(counted, 1, id)).toBe(JSON.stringify(product));
      written.push(
        JSON.stringify({ ...product, inventarios: product.inventarios.map(({ created_at: _c, updated_at: _u, ...entry }) => entry) }),
      );
    }
    const { json } = await listProductos(counted, 1, InventoryListRequest.parse({ per_page: 200 }));
    expect(json).toBe(`[${written.join(',')}]`);
    expect(await findProductoJson(counted, 2, ids[0]!)).toBeUndefined();
  });

  it('creates branches and warehouses, and a deactivated warehouse hides its stock and refuses reservations', async () => {
    const admin = { requestId: 'admin' };
    const { id: sucursal } = await h.bus.request(
      inventorySubjects,
      'inventory.admin.sucursal.create',
      { empresa_id: 1, nombre: 'Sucursal Sur' },
      admin,
    );
    const { id: bodega } = await h.bus.request(
      inventorySubjects,
      'inventory.admin.bodega.create',
      { empresa_id: 1, id_sucursal: sucursal, nombre: 'Bodega Sur' },
      admin,
    );
    const notTheirs = await h.bus
      .request(inventorySubjects, 'inventory.admin.bodega.create', { empresa_id: 2, id_sucursal: sucursal, nombre: 'Intrusa' }, admin)
      .then(
        () => 'created',
        (e: unknown) => (isAppError(e) ? e.code : String(e)),
      );
    expect(notTheirs).toBe('NOT_FOUND');

    const ctx = tenant(1);
    const { id } = await h.bus.request(
      inventorySubjects,
      'inventory.product.create',
      { codigo: 'SUR-1', nombre: 'Producto Sur', precio: 1 },
      ctx,
    );
    await h.bus.request(
      inventorySubjects,
      'inventory.stock.adjust',
      { clave: 'inicial:SUR-1', origen: 'admin', lineas: [{ id_producto: id, id_bodega: bodega, stock: 4 }] },
      ctx,
    );
    expect(
      (await h.bus.request(inventorySubjects, 'inventory.product.get', { id }, ctx)).inventarios.map((i) => [i.nombre_bodega, i.stock]),
    ).toEqual([['Bodega Sur', 4]]);

    await h.bus.request(inventorySubjects, 'inventory.admin.bodega.set-active', { empresa_id: 1, id: bodega, activo: false }, admin);
    expect((await h.bus.request(inventorySubjects, 'inventory.product.get', { id }, ctx)).inventarios).toEqual([]);
    const reserve = await h.bus
      .request(
        inventorySubjects,
        'inventory.stock.reserve',
        { clave: 'sur-1', id_bodega: bodega, lineas: [{ id_producto: id, cantidad: 1 }] },
        ctx,
      )
      .then(
        () => undefined,
        (e: unknown) => (isAppError(e) ? e.details : String(e)),
      );
    expect(reserve).toEqual({ id_bodega: [`La bodega ${bodega} está inactiva`] });
    const other = await h.bus
      .request(inventorySubjects, 'inventory.admin.sucursal.set-active', { empresa_id: 2, id: sucursal, activo: false }, admin)
      .then(
        () => 'changed',
        (e: unknown) => (isAppError(e) ? e.code : String(e)),
      );
    expect(other).toBe('NOT_FOUND');
  });
});
