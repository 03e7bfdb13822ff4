import { copyRows, deferIndexes, nextId, quoteIdent, syncIdentity, type CopyValue } from '../copy';
import { missingTables, type Loader } from '../context';
import { cents } from '../money';
import { addDays, timestampAt } from '../time';
import { BRANCH_NAMES, BRANDS, PRODUCT_KINDS, SERVICES, SIZES, VARIANTS } from '../words';

const SCHEMA = 'inventory';
const CATALOG = ['sucursales', 'bodegas', 'categorias', 'productos', 'inventarios'] as const;
const CATEGORIES = [...new Set(PRODUCT_KINDS.map(([, categoria]) => categoria))];

interface StockRow {
  empresaId: number;
  productoId: number;
  bodegaId: number;
  stock: number;
  createdAt: string;
}

/** Tables whose row triggers keep the summary counters (migration 0004). */
const SUMMARY_TRIGGER_TABLES = ['productos', 'inventarios'] as const;

/**
 * Branches, warehouses, categories, products (3 % services, 3 % disabled, 0.5 % soft-deleted)
 * and the stock of every physical product in every warehouse of its company. When the stock
 * ledger exists, each non-zero stock also gets its opening movement, so stock = Σ movements.
 * When the summary counters exist, their triggers are off during the COPY (they would update a
 * product and a counter row per copied row) and the counters are rebuilt in one pass after it,
 * by the same function the migration's backfill uses.
 */
export const inventoryLoader: Loader = {
  schema: SCHEMA,
  async missing(client) {
    const absent = await missingTables(client, SCHEMA, CATALOG);
    return absent.length > 0 ? `tables ${absent.join(', ')} do not exist` : undefined;
  },
  async load(ctx) {
    const { client, companies, progress } = ctx;
    const rnd = ctx.random.fork(SCHEMA);
    const withLedger = (await missingTables(client, SCHEMA, ['movimientos'])).length === 0;
    const withSummary = (await missingTables(client, SCHEMA, ['resumen_inventario'])).length === 0;
    const summaryTriggers = async (action: 'disable' | 'enable') => {
      for (const table of SUMMARY_TRIGGER_TABLES)
        await client.query(`alter table ${quoteIdent(SCHEMA)}.${quoteIdent(table)} ${action} trigger user`);
    };
    // Like the indexes, a failed load leaves them off: the database is loaded again from scratch.
    if (withSummary) await summaryTriggers('disable');
    const tables = withLedger ? [...CATALOG, 'movimientos'] : [...CATALOG];
    const deferred = await deferIndexes(client, SCHEMA, tables);
    const counts: Record<string, number> = {};

    let sucursalId = await nextId(client, SCHEMA, 'sucursales');
    let bodegaId = await nextId(client, SCHEMA, 'bodegas');
    let categoriaId = await nextId(client, SCHEMA, 'categorias');
    let productoId = await nextId(client, SCHEMA, 'productos');
    const sucursales: CopyValue[][] = [];
    const bodegas: CopyValue[][] = [];
    const categorias: CopyValue[][] = [];
    const categoryIds = new Map<number, Map<string, number>>();
    const opened = addDays(ctx.today, -3 * 365);
    const openedAt = timestampAt(opened, 8 * 3600);
    for (const company of companies) {
      company.sucursales = [];
      company.bodegas = [];
      for (let b = 0; b < company.plan.branches; b++) {
        const sucursal = {
          id: sucursalId++,
          nombre: `Sucursal ${BRANCH_NAMES[b % BRANCH_NAMES.length]}${b >= BRANCH_NAMES.length ? ` ${b + 1}` : ''}`,
        };
        company.sucursales.push(sucursal);
        sucursales.push([sucursal.id, company.empresaId, sucursal.nombre, true, openedAt, openedAt]);
      }
      for (let w = 0; w < company.plan.warehouses; w++) {
        const sucursal = company.sucursales[w % company.sucursales.length]!;
        const bodega = { id: bodegaId++, nombre: `Bodega ${w + 1} ${sucursal.nombre.replace('Sucursal ', '')}`, sucursalId: sucursal.id };
        company.bodegas.push(bodega);
        bodegas.push([bodega.id, company.empresaId, bodega.sucursalId, bodega.nombre, true, openedAt, openedAt]);
      }
      const ids = new Map<string, number>();
      for (const nombre of CATEGORIES) {
        ids.set(nombre, categoriaId);
        categorias.push([categoriaId++, company.empresaId, nombre]);
      }
      categoryIds.set(company.empresaId, ids);
      company.productos = {
        firstId: productoId,
        count: company.plan.products,
        codigo: [],
        nombre: [],
        precioCents: new Int32Array(company.plan.products),
        costoCents: new Int32Array(company.plan.products),
        impuesto: new Int8Array(company.plan.products),
        servicio: new Uint8Array(company.plan.products),
      };
      productoId += company.plan.products;
    }
    counts['inventory.sucursales'] = await copyRows(
      client,
      SCHEMA,
      'sucursales',
      ['id', 'empresa_id', 'nombre', 'activo', 'created_at', 'updated_at'],
      sucursales,
    );
    counts['inventory.bodegas'] = await copyRows(
      client,
      SCHEMA,
      'bodegas',
      ['id', 'empresa_id', 'sucursal_id', 'nombre', 'activo', 'created_at', 'updated_at'],
      bodegas,
    );
    counts['inventory.categorias'] = await copyRows(client, SCHEMA, 'categorias', ['id', 'empresa_id', 'nombre'], categorias);

    const totalProducts = companies.reduce((n, c) => n + c.plan.products, 0);
    const createdAt: string[] = [];
    function* productRows(): Generator<CopyValue[]> {
      for (const company of companies) {
        const p = company.productos!;
        const cats = categoryIds.get(company.empresaId)!;
        for (let i = 0; i < p.count; i++) {
          const id = p.firstId + i;
          const servicio = rnd.chance(0.03);
          const [kind, categoria] = rnd.pick(PRODUCT_KINDS);
          const marca = servicio ? null : rnd.pick(BRANDS);
          const nombre = servicio
            ? `${rnd.pick(SERVICES)} ${kind.toLowerCase()}`
            : `${kind} ${rnd.pick(VARIANTS)} ${marca} ${rnd.pick(SIZES)}`;
          const codigo = `${servicio ? 'S' : 'P'}-${String(i + 1).padStart(6, '0')}`;
          // Log-uniform prices from 0.25 to 1,500.00: many cheap items, a few expensive ones.
          const precio = Math.round(25 * Math.pow(6000, rnd.next()));
          const costo = Math.round(precio * (0.55 + rnd.next() * 0.25));
          const impuesto = rnd.chance(0.9) ? -1 : rnd.chance(0.5) ? 0 : 13;
          const created = timestampAt(addDays(ctx.today, -rnd.int(30, 3 * 365)), rnd.int(0, 86_399));
          const isDeleted = rnd.chance(0.005);
          p.codigo.push(codigo);
          p.nombre.push(nombre);
          p.precioCents[i] = precio;
          p.costoCents[i] = costo;
          p.impuesto[i] = impuesto;
          p.servicio[i] = servicio ? 1 : 0;
          createdAt.push(created);
          yield [
            id,
            company.empresaId,
            nombre,
            rnd.chance(0.4) ? `${nombre}. Garantía de fábrica.` : null,
            codigo,
            servicio ? null : `74${String(company.empresaId).padStart(2, '0')}${String(id).padStart(9, '0')}`,
            rnd.chance(0.02) ? null : cats.get(categoria)!,
            marca,
            servicio ? 'Servicio' : 'Producto',
            cents(precio),
            cents(costo),
            cents(Math.round(costo * (0.9 + rnd.next() * 0.1))),
            cents(costo),
            !rnd.chance(0.03),
            impuesto < 0 ? null : `${impuesto}.00`,
            rnd.chance(0.1) ? `https://cdn.example.com/productos/${id}.jpg` : null,
            created,
            created,
            isDeleted ? created : null,
          ];
        }
      }
    }
    let step = progress.step('inventory.productos', totalProducts);
    counts['inventory.productos'] = await copyRows(
      client,
      SCHEMA,
      'productos',
      [
        'id',
        'empresa_id',
        'nombre',
        'descripcion',
        'codigo',
        'barcode',
        'categoria_id',
        'marca',
        'tipo',
        'precio',
        'costo',
        'costo_anterior',
        'costo_promedio',
        'enable',
        'porcentaje_impuesto',
        'img',
        'created_at',
        'updated_at',
        'deleted_at',
      ],
      productRows(),
      step,
    );
    step.done();

    // Stock of every physical product in every warehouse of its company (services have none).
    const stock: StockRow[] = [];
    let index = 0;
    for (const company of companies) {
      const p = company.productos!;
      for (let i = 0; i < p.count; i++, index++) {
        if (p.servicio[i]) continue;
        for (const bodega of company.bodegas) {
          const roll = rnd.next();
          // 12 % out of stock, 0.3 % below zero (platform orders may oversell), the rest 1–400.
          const units = roll < 0.12 ? 0 : roll < 0.123 ? -rnd.int(1, 5) : rnd.int(1, 400);
          stock.push({
            empresaId: company.empresaId,
            productoId: p.firstId + i,
            bodegaId: bodega.id,
            stock: units,
            createdAt: createdAt[index]!,
          });
        }
      }
    }
    let inventarioId = await nextId(client, SCHEMA, 'inventarios');
    step = progress.step('inventory.inventarios', stock.length);
    counts['inventory.inventarios'] = await copyRows(
      client,
      SCHEMA,
      'inventarios',
      ['id', 'empresa_id', 'producto_id', 'bodega_id', 'stock', 'stock_minimo', 'stock_maximo', 'created_at', 'updated_at'],
      (function* () {
        for (const s of stock)
          yield [
            inventarioId++,
            s.empresaId,
            s.productoId,
            s.bodegaId,
            `${s.stock}.000`,
            `${rnd.int(2, 20)}.000`,
            `${rnd.int(100, 1000)}.000`,
            s.createdAt,
            s.createdAt,
          ];
      })(),
      step,
    );
    step.done();

    if (withLedger) {
      const opening = stock.filter((s) => s.stock !== 0);
      step = progress.step('inventory.movimientos', opening.length);
      counts['inventory.movimientos'] = await copyRows(
        client,
        SCHEMA,
        'movimientos',
        ['empresa_id', 'producto_id', 'bodega_id', 'tipo', 'cantidad', 'stock_resultante', 'origen', 'concepto', 'created_at'],
        (function* () {
          for (const s of opening)
            yield [
              s.empresaId,
              s.productoId,
              s.bodegaId,
              'inventario_inicial',
              `${s.stock}.000`,
              `${s.stock}.000`,
              'inventario',
              'Inventario inicial',
              s.createdAt,
            ];
        })(),
        step,
      );
      step.done();
    }

    if (withSummary) {
      await summaryTriggers('enable');
      step = progress.step('inventory summary', 1);
      await client.query(`select ${quoteIdent(SCHEMA)}.resumen_reconstruir()`);
      for (const table of ['resumen_inventario', 'resumen_categorias']) {
        const { rows } = await client.query<{ n: number }>(`select count(*)::int as n from ${quoteIdent(SCHEMA)}.${quoteIdent(table)}`);
        counts[`${SCHEMA}.${table}`] = rows[0]!.n;
      }
      step.add(1);
      step.done();
    }

    step = progress.step('inventory indexes', deferred.count);
    await deferred.restore(step);
    step.done();
    for (const table of CATALOG) await syncIdentity(client, SCHEMA, table);
    return counts;
  },
};
