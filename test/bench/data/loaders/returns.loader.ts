import type pg from 'pg';
import { copyRows, deferIndexes, nextId, syncIdentity, type CopyValue } from '../copy';
import { missingTables, type Loader } from '../context';
import { cents, netOfTax } from '../money';
import { addDays } from '../time';

const SCHEMA = 'returns';
const TABLES = ['documentos', 'devoluciones', 'devolucion_detalles'] as const;
const HISTORY_DAYS = 730;
/** Sales whose return counts are written per statement. */
const COUNT_BATCH = 5_000;

/**
 * Returns of about a tenth of the completed sales (the sales loader picks them): one unit of the
 * sale's first line, a few days after it, numbered on the company's "Nota de crédito" series with
 * its counter on the next number; 5 % annulled. Like historical sales, their stock effect is
 * already in the loaded stock: they carry no stock key. Their sales count them.
 */
export const returnsLoader: Loader = {
  schema: SCHEMA,
  async missing(client) {
    const absent = await missingTables(client, SCHEMA, TABLES);
    return absent.length > 0 ? `tables ${absent.join(', ')} do not exist` : undefined;
  },
  async load({ client, clientOf, companies, random, progress, today }) {
    const rnd = random.fork(SCHEMA);
    const deferred = await deferIndexes(client, SCHEMA, [...TABLES]);
    let documentoId = await nextId(client, SCHEMA, 'documentos');
    let devolucionId = await nextId(client, SCHEMA, 'devoluciones');
    let detalleId = await nextId(client, SCHEMA, 'devolucion_detalles');
    const start = addDays(today, -HISTORY_DAYS + 1);
    const documentos: CopyValue[][] = [];
    const lines: CopyValue[][] = [];
    const total = companies.reduce((n, c) => n + (c.ventas?.devolvibles.length ?? 0), 0);
    const step = progress.step('returns.devoluciones', total);
    function* returnRows(): Generator<CopyValue[]> {
      for (const company of companies) {
        const picked = company.ventas?.devolvibles ?? [];
        if (picked.length === 0 || !company.productos) continue;
        const admin = company.usuarios.find((u) => u.rol === 'Administrador')!;
        const documento = { id: documentoId++, numero: 0 };
        // Returns are numbered in date order, like the sales they come from.
        const dated = picked
          .map((sale) => ({ sale, day: Math.min(HISTORY_DAYS - 1, sale.day + rnd.int(0, 15)) }))
          .sort((a, b) => a.day - b.day || a.sale.ventaId - b.sale.ventaId);
        for (const { sale, day } of dated) {
          const id = devolucionId++;
          const numero = ++documento.numero;
          const fecha = addDays(start, day);
          const at = new Date(Date.parse(`${fecha}T00:00:00Z`) + rnd.int(32_400, 64_800) * 1000).toISOString();
          const p = company.productos;
          const i = sale.line.productIndex;
          const totalCents = sale.line.precioCents;
          const sub = netOfTax(totalCents, sale.line.rate);
          const annulled = rnd.chance(0.05);
          lines.push([
            detalleId++,
            id,
            company.empresaId,
            1,
            sale.line.detalleId,
            p.firstId + i,
            p.codigo[i]!,
            p.nombre[i]!,
            '',
            '',
            'Unidad',
            !sale.line.servicio,
            '1.000',
            `${cents(sale.line.precioCents)}00`,
            `${cents(p.costoCents[i]!)}00`,
            '0.00',
            `${sale.line.rate}.0000`,
            cents(sub),
            cents(totalCents - sub),
            cents(totalCents),
            sale.line.rate === 0 ? cents(totalCents) : '0.00',
            at,
            at,
          ]);
          yield [
            id,
            company.empresaId,
            sale.ventaId,
            sale.bodegaId,
            documento.id,
            numero,
            `NC-${numero}`,
            fecha,
            'devolucion',
            null,
            rnd.chance(0.3) ? 'Producto dañado' : null,
            cents(sub),
            cents(totalCents - sub),
            cents(totalCents),
            '0.00',
            sale.line.rate === 0 ? cents(totalCents) : '0.00',
            !annulled,
            annulled ? at : null,
            admin.id,
            admin.nombre,
            sale.nombreCliente,
            'Nota de crédito',
            at,
            at,
          ];
        }
        documentos.push([documento.id, company.empresaId, 'Nota de crédito', 'NC-', documento.numero + 1]);
      }
    }
    const counts: Record<string, number> = {};
    counts['returns.devoluciones'] = await copyRows(
      client,
      SCHEMA,
      'devoluciones',
      [
        'id',
        'empresa_id',
        'venta_id',
        'bodega_id',
        'documento_id',
        'numero',
        'correlativo',
        'fecha',
        'tipo',
        'referencia',
        'observaciones',
        'sub_total',
        'iva',
        'total',
        'descuento',
        'exenta',
        'enable',
        'anulada_at',
        'usuario_id',
        'nombre_usuario',
        'nombre_cliente',
        'nombre_documento',
        'created_at',
        'updated_at',
      ],
      returnRows(),
      step,
    );
    step.done();
    counts['returns.devolucion_detalles'] = await copyRows(
      client,
      SCHEMA,
      'devolucion_detalles',
      [
        'id',
        'devolucion_id',
        'empresa_id',
        'linea',
        'venta_detalle_id',
        'id_producto',
        'codigo_producto',
        'nombre_producto',
        'marca_producto',
        'descripcion',
        'medida',
        'mueve_stock',
        'cantidad',
        'precio',
        'costo',
        'descuento',
        'porcentaje_impuesto',
        'sub_total',
        'iva',
        'total',
        'exenta',
        'created_at',
        'updated_at',
      ],
      lines,
    );
    counts['returns.documentos'] = await copyRows(
      client,
      SCHEMA,
      'documentos',
      ['id', 'empresa_id', 'nombre', 'prefijo', 'correlativo'],
      documentos,
    );
    await deferred.restore();
    for (const table of TABLES) await syncIdentity(client, SCHEMA, table);
    await countReturnsOnSales(client, await clientOf('sales'));
    return counts;
  },
};

/**
 * Each sale counts its active returns and their amount, as the sales service's consumer of their
 * events keeps them: read from the returns' database in pages of sales (by id), each page written
 * to the sales' database in one statement. The two schemas may live on different servers, so no
 * statement names both. Returns the sales updated.
 */
async function countReturnsOnSales(returns: pg.ClientBase, sales: pg.ClientBase): Promise<number> {
  let after = 0;
  let updated = 0;
  for (;;) {
    const { rows } = await returns.query<{ venta_id: number; n: number; total: string }>(
      `select venta_id, count(*)::int as n, sum(total)::text as total from returns.devoluciones
        where enable and venta_id > $1 group by venta_id order by venta_id limit $2`,
      [after, COUNT_BATCH],
    );
    if (rows.length === 0) return updated;
    const result = await sales.query(
      `update sales.ventas v set devoluciones_activas = r.n, monto_devuelto = r.total
         from unnest($1::int[], $2::int[], $3::numeric[]) as r(venta_id, n, total) where v.id = r.venta_id`,
      [rows.map((r) => r.venta_id), rows.map((r) => r.n), rows.map((r) => r.total)],
    );
    updated += result.rowCount ?? 0;
    after = rows.at(-1)!.venta_id;
  }
}
