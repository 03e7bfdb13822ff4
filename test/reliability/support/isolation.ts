import { SchemaClients, type DatabaseUrls, type Query, type Row } from '@erp/back-office';
import { API_BASE } from '@erp/contracts';
import { apiRoutes } from '../../../services/gateway/src/http/routes';
import { wooHeaders, wooOrder } from '../../../services/webhook-ingest/test/platform.factories';
import { saleBody as fixtureSale } from '../../support/sales-fixture';
import { WOO_SECRET, type Company, type CompanyRef } from './fixture';
import { call, type Attempt, type CallInit } from './http';
import { settle } from './invariants';
import { rowText } from './row-text';

export interface IsolationTarget {
  baseUrl: string;
  databases: DatabaseUrls;
  companies: Record<CompanyRef, Company>;
}

export interface IsolationReport {
  requests: number;
  checks: number;
  /** Endpoints of the route table the sweep exercised, by label. */
  endpoints: string[];
  violations: string[];
}

type Kind = 'ventas' | 'productos' | 'devoluciones' | 'exportaciones' | 'apiKeys';

/** Which ids a path's `{id}` names, by its first segment. */
const KIND_OF: Record<string, Kind> = {
  sales: 'ventas',
  inventory: 'productos',
  returns: 'devoluciones',
  exports: 'exportaciones',
  'api-keys': 'apiKeys',
};
/** The lookups, by path, and the ids each lists. */
const LOOKUP_OF: Record<string, 'sucursales' | 'documentos' | 'canales' | 'clientes'> = {
  '/branches': 'sucursales',
  '/document-types': 'documentos',
  '/channels': 'canales',
  '/customers': 'clientes',
};
const NOT_FOUND: Record<Kind, string> = {
  ventas: 'Venta no encontrada',
  productos: 'Producto no encontrado',
  devoluciones: 'Devolución no encontrada',
  exportaciones: 'Exportación no encontrada',
  apiKeys: 'API key no encontrado',
};

interface Ids {
  ventas: number[];
  productos: number[];
  devoluciones: number[];
  exportaciones: number[];
  apiKeys: number[];
  sucursales: number[];
  bodegas: number[];
  documentos: number[];
  canales: number[];
  clientes: number[];
}

/**
 * The tenant isolation sweep: two lookalike companies (same names, codes, references, advisor
 * codes, order ids), and every endpoint of the route table called with one company's key and
 * the other's ids, filters and references. Nothing of the other may be seen (404 for its ids,
 * lists and summaries only of one's own) or touched (its rows compared before and after).
 */
export async function isolationSweep(target: IsolationTarget): Promise<IsolationReport> {
  const report: IsolationReport = { requests: 0, checks: 0, endpoints: [], violations: [] };
  const db = await SchemaClients.connect(target.databases);
  const { q } = db;
  const routes = apiRoutes({ standard: 1000, withDateFilters: 2000 });
  const exercised = new Set<string>();
  try {
    for (const [viewer, other] of [
      [target.companies.a, target.companies.b],
      [target.companies.b, target.companies.a],
    ] as const) {
      const send = async (label: string, path: string, init: CallInit = {}): Promise<Attempt> => {
        exercised.add(label);
        report.requests++;
        const res = await call(`${target.baseUrl}${path}`, { key: viewer.key, ...init });
        report.checks++;
        if (res.text.includes(other.ref === 'a' ? 'Empresa A' : 'Empresa B'))
          fail(`${label} ${path}: the answer names ${other.ref}'s company`);
        if (res.status >= 200 && res.status < 300 && res.body?.meta && res.body.meta.empresa !== `Empresa ${viewer.ref.toUpperCase()}`) {
          fail(`${label} ${path}: meta.empresa is ${res.body.meta.empresa}`);
        }
        return res;
      };
      const fail = (message: string) => report.violations.push(`[${viewer.ref} looking at ${other.ref}] ${message}`);
      const expect = (ok: boolean, message: string) => {
        report.checks++;
        if (!ok) fail(message);
      };

      // Writes the other company makes first, so the viewer's lookalike requests have something to collide with.
      const onlyOther = `ISO-${other.ref}-only`;
      await call(`${target.baseUrl}${API_BASE}/sales`, {
        method: 'POST',
        key: other.key,
        json: saleBody(other, { referencia_externa: onlyOther }),
      });
      await call(`${target.baseUrl}${API_BASE}/packages/import`, {
        method: 'POST',
        key: other.key,
        json: { packages: [packageItem(`WR-${onlyOther}`, { id_sucursal: other.sucursales.centro })] },
      });
      const theirExport = await call(`${target.baseUrl}${API_BASE}/exports`, {
        method: 'POST',
        key: other.key,
        json: { recurso: 'sales' },
      });
      expect(theirExport.status === 202, `${other.ref}'s export answered ${theirExport.status}`);
      await finished(target.baseUrl, other.key, theirExport.body?.data?.id);
      const orderId = 700_000 + (other.ref === 'a' ? 1 : 2);
      await deliverWoo(target.baseUrl, other, orderId);
      const pending = await settle(target.databases, 30_000, 50);
      expect(pending.length === 0, `setup did not settle: ${pending.join(', ')}`);

      const idsOf = async (c: Company): Promise<Ids> => ({
        ventas: (await q('select id from sales.ventas where empresa_id = $1 order by id', [c.id])).map((r) => r.id),
        productos: (await q('select id from inventory.productos where empresa_id = $1 order by id', [c.id])).map((r) => r.id),
        devoluciones: (await q('select id from returns.devoluciones where empresa_id = $1 order by id', [c.id])).map((r) => r.id),
        exportaciones: (await q('select id from exports.exportaciones where empresa_id = $1 order by id', [c.id])).map((r) => r.id),
        apiKeys: (await q('select id from gateway.api_keys where empresa_id = $1 order by id', [c.id])).map((r) => r.id),
        sucursales: Object.values(c.sucursales),
        bodegas: Object.values(c.bodegas),
        documentos: Object.values(c.documentos),
        canales: Object.values(c.canales),
        // Platform orders add customers as they come: the database says which there are now.
        clientes: (await q('select id from sales.clientes where empresa_id = $1 order by id', [c.id])).map((r) => r.id),
      });
      const mine = await idsOf(viewer);
      const theirs = await idsOf(other);
      const before = await tenantSnapshot(db.each, other.id);

      for (const route of routes) {
        const label = `${route.method.toUpperCase()} ${route.path.replace(/:(\w+)/g, '{$1}')}`;
        const kind = KIND_OF[route.path.split('/')[1]!];
        if (route.path.includes(':id')) {
          // Every id of the other company: 404, the same answer as an id that does not exist.
          for (const id of kind ? theirs[kind] : [...theirs.ventas, ...theirs.productos]) {
            const path = `${API_BASE}${route.path.replace(':id', String(id))}`;
            // A body each route accepts, so only the id can be what refuses it.
            const json = route.path.endsWith('/replay')
              ? { desde: '2026-01-01T00:00:00Z' }
              : route.path.startsWith('/sales/')
                ? { observaciones: 'cambio ajeno', detalles: [{ id_producto: mine.productos[0], cantidad: 1 }] }
                : route.method === 'patch'
                  ? { descripcion: 'cambio ajeno' }
                  : {};
            const init: CallInit = route.method === 'get' ? {} : { method: route.method.toUpperCase(), json };
            const res = await send(label, path, init);
            expect(res.status === 404, `${label} with ${other.ref}'s id ${id} answered ${res.status}`);
            if (kind)
              expect(
                res.body?.error === NOT_FOUND[kind],
                `${label} with ${other.ref}'s id ${id}: message ${JSON.stringify(res.body?.error)}`,
              );
          }
          continue;
        }
        if (route.method === 'get' && route.path.endsWith('/summary')) {
          const res = await send(label, `${API_BASE}${route.path}`);
          expect(res.status === 200, `${label} answered ${res.status}`);
          const data = res.body?.data ?? {};
          if (route.path === '/sales/summary')
            expect(
              data.cantidad_ventas === mine.ventas.length,
              `${label}: ${data.cantidad_ventas} sales, ${viewer.ref} has ${mine.ventas.length}`,
            );
          if (route.path === '/inventory/summary')
            expect(
              data.productos?.total === mine.productos.length,
              `${label}: ${data.productos?.total} products, ${viewer.ref} has ${mine.productos.length}`,
            );
          if (route.path === '/returns/summary') {
            const [{ n }] = (await q('select count(*)::int as n from returns.devoluciones where empresa_id = $1 and enable', [
              viewer.id,
            ])) as [Row];
            expect(data.cantidad_devoluciones === n, `${label}: ${data.cantidad_devoluciones} returns, ${viewer.ref} has ${n} active`);
          }
          continue;
        }
        if (route.method === 'get' && kind) {
          // Lists: filters that match the other company's rows exactly still show only one's own.
          const filters = [
            '',
            'codigo=LAP-14',
            'nombre=Laptop',
            'marca=Acer',
            'categoria=Electr',
            'estado=Completada',
            'fecha_inicio=2026-01-01&fecha_fin=2026-12-31',
            ...theirs.ventas.slice(0, 3).map((id) => `id_venta=${id}`),
          ];
          for (const filter of filters) {
            const res = await send(label, `${API_BASE}${route.path}?per_page=200${filter ? `&${filter}` : ''}`);
            if (res.status === 400) continue; // a filter this list does not take
            expect(res.status === 200, `${label}?${filter} answered ${res.status}`);
            const ids = ((res.body?.data ?? []) as Array<{ id: number }>).map((r) => r.id);
            const leaked = ids.filter((id) => theirs[kind].includes(id));
            expect(leaked.length === 0, `${label}?${filter} listed ${other.ref}'s ${kind} ${leaked.join(', ')}`);
            expect(
              ids.every((id) => mine[kind].includes(id)),
              `${label}?${filter} listed ids that are not ${viewer.ref}'s`,
            );
            if (filter === '')
              expect(
                res.body?.pagination?.total === mine[kind].length,
                `${label}: total ${res.body?.pagination?.total}, ${viewer.ref} has ${mine[kind].length}`,
              );
          }
          continue;
        }
        if (route.method === 'post' && route.path === '/sales') {
          // The other company's branch, warehouse, document, channel, customer or product: refused, nothing made.
          const variants: Array<[string, Record<string, unknown>]> = [
            ['id_sucursal', { id_sucursal: theirs.sucursales[0] }],
            ['id_bodega', { id_bodega: theirs.bodegas[0] }],
            ['id_documento', { id_documento: theirs.documentos[0] }],
            ['id_canal', { id_canal: theirs.canales[0] }],
            ['id_cliente', { estado: 'Pendiente', id_cliente: theirs.clientes[0] }],
            ['detalles.id_producto', { detalles: [{ id_producto: theirs.productos[0], cantidad: 1 }] }],
          ];
          const ventas = mine.ventas.length;
          for (const [field, change] of variants) {
            const res = await send(label, `${API_BASE}/sales`, {
              method: 'POST',
              json: saleBody(viewer, { ...change, referencia_externa: `ISO-${viewer.ref}-${field}` }),
            });
            expect(res.status === 422, `${label} with ${other.ref}'s ${field} answered ${res.status}`);
          }
          const [{ n }] = (await q('select count(*)::int as n from sales.ventas where empresa_id = $1', [viewer.id])) as [Row];
          expect(n === ventas, `${label}: refused sales with ${other.ref}'s ids left ${n - ventas} sales behind`);
          // Names, codes and references both companies use resolve to one's own.
          const byName = await send(label, `${API_BASE}/sales`, {
            method: 'POST',
            json: saleBody(viewer, {
              id_sucursal: undefined,
              sucursal: 'Sucursal Centro',
              referencia_externa: onlyOther,
              detalles: [{ codigo_producto: 'LAP-14', cantidad: 1 }],
            }),
          });
          expect(
            byName.status === 201,
            `${label} with a reference only ${other.ref} has answered ${byName.status} (must create ${viewer.ref}'s own)`,
          );
          expect(
            mine.productos.includes(byName.body?.data?.detalles?.[0]?.id_producto),
            `${label}: codigo_producto LAP-14 resolved to a product that is not ${viewer.ref}'s`,
          );
          const shared = await send(label, `${API_BASE}/sales`, {
            method: 'POST',
            json: saleBody(viewer, { referencia_externa: 'REF-1' }),
          });
          // Another body under the reference is refused with 409 naming the company's own sale.
          const named = Number(shared.body?.details?.id_venta?.[0]);
          expect(
            shared.status === 409 && mine.ventas.includes(named),
            `${label} with REF-1 (both have it) answered ${shared.status} naming sale ${named}`,
          );
          continue;
        }
        if (route.method === 'post' && route.path === '/sales/batch') {
          // Each sale of a batch is judged as alone: the other company's ids refused, a shared reference its own.
          const res = await send(label, `${API_BASE}/sales/batch`, {
            method: 'POST',
            json: {
              ventas: [
                saleBody(viewer, { referencia_externa: `ISO-LOTE-${viewer.ref}`, id_bodega: theirs.bodegas[0] }),
                saleBody(viewer, { referencia_externa: 'REF-1' }),
              ],
            },
          });
          const [foreign, shared] = res.body?.data?.resultados ?? [];
          expect(
            res.status === 200 &&
              foreign?.status === 422 &&
              shared?.status === 409 &&
              mine.ventas.includes(Number(shared?.details?.id_venta?.[0])),
            `${label} answered ${res.status} with ${JSON.stringify(res.body?.data?.resultados)?.slice(0, 300)}`,
          );
          continue;
        }
        if (route.method === 'post' && route.path === '/packages/import') {
          const res = await send(label, `${API_BASE}/packages/import`, {
            method: 'POST',
            json: {
              packages: [
                packageItem(`WR-${onlyOther}`, { sucursal: 'Sucursal Centro' }),
                packageItem(`WR-ISO-${viewer.ref}-ajena`, { id_sucursal: theirs.sucursales[0] }),
              ],
            },
          });
          expect(res.status === 200, `${label} answered ${res.status}`);
          expect(
            res.body?.created === 1 && res.body?.items?.[0]?.status === 'created',
            `${label}: a wr only ${other.ref} has was ${res.body?.items?.[0]?.status ?? 'refused'} (must be created for ${viewer.ref})`,
          );
          expect(res.body?.errors?.length === 1 && res.body.errors[0].index === 1, `${label}: ${other.ref}'s branch id was not refused`);
          continue;
        }
        const lookup = LOOKUP_OF[route.path];
        if (route.method === 'get' && lookup) {
          // Lookups: searched by what the other company's rows hold too, they list only one's own.
          for (const filter of lookup === 'clientes' ? ['', 'q=a', 'q=e', 'per_page=200'] : ['']) {
            const res = await send(label, `${API_BASE}${route.path}${filter ? `?${filter}` : ''}`);
            expect(res.status === 200, `${label}?${filter} answered ${res.status}`);
            const rows = (res.body?.data ?? []) as Array<{ id: number; bodegas?: Array<{ id: number }> }>;
            const ids = rows.map((r) => r.id);
            expect(ids.length > 0 || filter !== '', `${label} listed nothing of ${viewer.ref}'s`);
            expect(
              ids.every((id) => mine[lookup].includes(id) && !theirs[lookup].includes(id)),
              `${label}?${filter} listed ids that are not ${viewer.ref}'s: ${ids.join(', ')}`,
            );
            const bodegas = rows.flatMap((r) => (r.bodegas ?? []).map((b) => b.id));
            expect(
              bodegas.every((id) => mine.bodegas.includes(id)),
              `${label} listed warehouses that are not ${viewer.ref}'s`,
            );
          }
          continue;
        }
        if (route.method === 'post' && route.path === '/exports') {
          // Filtered by the other company's sale: the file holds none of its returns.
          const res = await send(label, `${API_BASE}/exports`, {
            method: 'POST',
            json: { recurso: 'returns', filtros: { id_venta: theirs.ventas[0] } },
          });
          expect(res.status === 202, `${label} answered ${res.status}`);
          const done = await finished(target.baseUrl, viewer.key, res.body?.data?.id);
          expect(done?.estado === 'completada' && done.objetos === 0, `${label} by ${other.ref}'s sale: ${JSON.stringify(done)}`);
          mine.exportaciones.push(res.body?.data?.id);
          continue;
        }
        if (route.path === '/system/rate-limit') {
          const res = await send(label, `${API_BASE}/system/rate-limit`);
          expect(res.body?.data?.empresa_id === viewer.id, `${label}: empresa_id ${res.body?.data?.empresa_id}`);
          continue;
        }
        // An endpoint this sweep has no specific rule for yet: it still must not answer with the other's data.
        await send(label, `${API_BASE}${route.path}`, route.method === 'get' ? {} : { method: route.method.toUpperCase(), json: {} });
      }

      // The same platform order id in both companies: each integration makes its own company's sale.
      exercised.add('POST /api/webhook/woocommerce/{token}');
      report.requests++;
      const delivered = await deliverWoo(target.baseUrl, viewer, orderId);
      expect(delivered.status === 200, `woocommerce order ${orderId} answered ${delivered.status}`);
      await settle(target.databases, 30_000, 50);
      const sales = await q('select empresa_id from sales.ventas where referencia_externa = $1 order by empresa_id', [`woo-${orderId}`]);
      expect(
        sales.length === 2 && sales.some((r) => r.empresa_id === viewer.id),
        `order woo-${orderId} of both companies: sales of ${JSON.stringify(sales.map((r) => r.empresa_id))}`,
      );

      const after = await tenantSnapshot(db.each, other.id);
      const changed = [...after.keys()].filter((t) => after.get(t) !== before.get(t));
      expect(changed.length === 0, `${other.ref}'s rows changed while ${viewer.ref} was calling: ${changed.join(', ')}`);
    }
    report.endpoints = [...exercised].sort();
    return report;
  } finally {
    await db.end();
  }
}

/** Count and checksum of one company's rows in every table that has `empresa_id`. */
async function tenantSnapshot(databases: Query[], empresaId: number): Promise<Map<string, string>> {
  const snapshot = new Map<string, string>();
  for (const q of databases) {
    const tables = await q(
      `select table_schema as schema, table_name as table from information_schema.columns
       where column_name = 'empresa_id' and table_schema in ('gateway', 'inventory', 'sales', 'returns', 'packages', 'webhook_ingest', 'exports') order by 1, 2`,
    );
    const sql = tables
      .map(
        ({ schema, table }) =>
          `select '${schema}.${table}' as t, count(*)::text || ':' || md5(coalesce(string_agg(${rowText(schema, table)}, '|' order by ${rowText(schema, table)}), '')) as h from "${schema}"."${table}" x where x.empresa_id = $1`,
      )
      .join(' union all ');
    if (sql) for (const r of await q(sql, [empresaId])) snapshot.set(r.t, r.h);
  }
  return snapshot;
}

/** The sales fixture's sale, of one mouse (a field set undefined is left out of the JSON sent). */
function saleBody(c: Company, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return fixtureSale(c, { detalles: [{ id_producto: c.productos.mouse, cantidad: 1 }], ...overrides });
}

function packageItem(wr: string, branch: Record<string, unknown>): Record<string, unknown> {
  return {
    cliente: 'Cliente Uno',
    codigo_asesor: 'AS-01',
    wr,
    guia: 'G-1',
    embalaje: 'Caja',
    piezas: 1,
    peso: 1,
    precio: 10,
    cuenta_a_terceros: 0,
    otros: 0,
    total: 10,
    ...branch,
  };
}

/** The export once it ended (undefined when it did not within 30 s). */
async function finished(baseUrl: string, key: string, id: number): Promise<{ estado: string; objetos: number | null } | undefined> {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 100))) {
    const data = (await call(`${baseUrl}${API_BASE}/exports/${id}`, { key })).body?.data;
    if (data && data.estado !== 'en_cola' && data.estado !== 'procesando') return data;
  }
  return undefined;
}

async function deliverWoo(baseUrl: string, c: Company, id: number): Promise<Attempt> {
  const body = JSON.stringify(
    wooOrder({ id, status: 'processing', line_items: [{ product_id: 555, sku: 'LAP-14', quantity: 1, total: '10.00' }] }),
  );
  return call(`${baseUrl}${c.integraciones.woo!.path}`, { method: 'POST', body, headers: wooHeaders(body, 'order.created', WOO_SECRET) });
}
