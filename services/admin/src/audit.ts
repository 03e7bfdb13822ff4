import { SchemaClients, databasesOf, type DatabaseUrls, type Query, type Row } from './schema-clients';

/** One invariant, checked over `checked` items; `violations` names what broke it, with ids (empty when it holds). */
export interface InvariantResult {
  name: string;
  checked: number;
  violations: string[];
  /** Time the check took, when the audit ran it. */
  ms?: number;
}

/**
 * Connections that may read every schema (`databaseUrls` for the schemas a deployment moved to a
 * server of its own); the audit opens them read-only and writes nothing. Each check reads one
 * schema per query; what spans services is compared by key here.
 */
export interface AuditOptions extends DatabaseUrls {
  /**
   * How long to wait before checking again what failed: only violations seen both times are
   * reported. Several databases cannot be read in one snapshot, so a change committed between two
   * of their reads can show for an instant; the default is 0 with one database, 5 s with several.
   */
  confirmAfterMs?: number;
  /** Only this company (every company when absent). */
  empresaId?: number;
  /** Rows per page of the checks that walk sales, reservations and returns one by one. */
  pageSize?: number;
  /**
   * Work younger than this is in flight, not stuck: a reservation still open, a delivery not yet
   * processed, an event not yet published. 0 when the system is known to be at rest (the chaos run
   * waits for it).
   */
  inFlightMs?: number;
  /** Number each sale document type started at, by name; otherwise the lowest number it issued. */
  initialCorrelatives?: Record<string, number>;
}

interface Empresa {
  id: number;
  venderSinStock: boolean;
}
interface Check {
  name: string;
  /** Runs once for the whole database instead of per company (tables without a company). */
  global?: boolean;
  run: (q: Query, empresa: Empresa, options: Settings) => Promise<{ checked: number; violations: string[] }>;
}
type Settings = Required<Pick<AuditOptions, 'pageSize' | 'inFlightMs'>> &
  AuditOptions & {
    /** One query function per database, for what every database holds (outboxes). */
    databases: Query[];
  };

/** Stock origins of the sales pipeline: the reservation of a sale, its updates by difference, its annulment. */
const SALE_ORIGINS = ['venta', 'actualizacion_venta', 'anulacion_venta'];
/** Origins that may take stock below zero even where the company forbids selling without it (DESIGN §4). */
const BELOW_ZERO_ORIGINS = ['webhook', 'anulacion_devolucion'];
const KNOWN_ORIGINS = [...SALE_ORIGINS, 'inventario', 'devolucion', 'anulacion_devolucion', 'webhook'];

/** `producto/bodega` → exact quantity text (4 decimals), from rows with those columns. */
const byProductWarehouse = (rows: Row[]) => new Map(rows.map((r) => [`${r.producto_id}/${r.bodega_id}`, String(r.cantidad)]));
/** A quantity with up to 4 decimals as an integer of ten-thousandths, so comparisons are exact. */
const units = (text: string | undefined): bigint => {
  if (text === undefined) return 0n;
  const [int, frac = ''] = text.split('.');
  const negative = int!.startsWith('-');
  const magnitude = BigInt(int!.replace('-', '')) * 10_000n + BigInt((frac + '0000').slice(0, 4));
  return negative ? -magnitude : magnitude;
};
const show = (value: bigint) => {
  const abs = value < 0n ? -value : value;
  const frac = (abs % 10_000n).toString().padStart(4, '0').replace(/0+$/, '');
  return `${value < 0n ? '-' : ''}${abs / 10_000n}${frac ? `.${frac}` : ''}`;
};
/** Where two per-product-and-warehouse maps differ, described with `describe`. */
function differences(a: Map<string, string>, b: Map<string, string>, describe: (key: string, a: string, b: string) => string): string[] {
  const out: string[] = [];
  const keys = new Set(a.keys());
  for (const key of b.keys()) keys.add(key);
  for (const key of keys) {
    const x = units(a.get(key));
    const y = units(b.get(key));
    if (x !== y) out.push(describe(key, show(x), show(y)));
  }
  return out;
}
const olderThan = (ms: number) => `now() - make_interval(secs => ${ms / 1000})`;

/**
 * Walks a company's rows of a table in pages of `pageSize` by `id` (keyset, so a page costs the
 * same at any depth), handing each page's ids (and the first and last of them) to `visit`.
 */
async function inPages(
  q: Query,
  table: string,
  empresaId: number,
  pageSize: number,
  visit: (ids: number[], range: { first: number; last: number }) => Promise<void>,
  where = 'true',
): Promise<number> {
  let last = 0;
  let seen = 0;
  for (;;) {
    const rows = await q(`select id from ${table} where empresa_id = $1 and id > $2 and ${where} order by id limit $3`, [
      empresaId,
      last,
      pageSize,
    ]);
    if (rows.length === 0) return seen;
    const ids = rows.map((r) => Number(r.id));
    seen += ids.length;
    last = ids[ids.length - 1]!;
    await visit(ids, { first: ids[0]!, last });
  }
}

/**
 * The books' invariants (DESIGN §3): what the guarantees promise the databases hold after any
 * fault. Each query reads one schema; what spans services is compared here, as the services
 * themselves only meet over NATS.
 */
const CHECKS: Check[] = [
  {
    name: 'no reference or platform order has two sales',
    run: async (q, e) => {
      const rows = await q(
        `select referencia_externa, array_agg(id order by id) as ids from sales.ventas where empresa_id = $1 and referencia_externa is not null group by 1 having count(*) > 1`,
        [e.id],
      );
      const [{ n }] = (await q('select count(*)::int as n from sales.ventas where empresa_id = $1 and referencia_externa is not null', [
        e.id,
      ])) as [Row];
      return { checked: n, violations: rows.map((r) => `empresa ${e.id} ${r.referencia_externa}: sales ${r.ids.join(', ')}`) };
    },
  },
  {
    name: 'sale correlatives are unique and gapless per document type',
    run: async (q, e, o) => {
      const rows = await q(
        `select d.id, d.nombre, d.correlativo as siguiente, count(v.id)::int as n, count(distinct v.numero)::int as distintos, min(v.numero) as min, max(v.numero) as max,
                count(*) filter (where v.correlativo <> d.prefijo || v.numero::text)::int as mal_formados
         from sales.documentos d left join sales.ventas v on coalesce(v.documento_emisor_id, v.documento_id) = d.id
         where d.empresa_id = $1 group by d.id order by d.id`,
        [e.id],
      );
      const violations: string[] = [];
      for (const d of rows) {
        const initial: number | undefined = o.initialCorrelatives?.[d.nombre];
        // From the known start, every number up to the counter was issued once; without it, the numbers issued run without a gap up to the counter.
        const gapless =
          initial !== undefined
            ? d.n === d.siguiente - initial && (d.n === 0 || (d.distintos === d.n && d.min === initial && d.max === d.siguiente - 1))
            : d.n === 0 || (d.distintos === d.n && d.max === d.siguiente - 1 && d.max - d.min + 1 === d.n);
        if (!gapless || d.mal_formados > 0)
          violations.push(
            `documento ${d.id} ${d.nombre} (empresa ${e.id}): ${d.n} sales, ${d.distintos} distinct numbers ${d.min}..${d.max}, counter at ${d.siguiente}, ${d.mal_formados} malformed`,
          );
      }
      return { checked: rows.reduce((s, d) => s + d.n, 0), violations };
    },
  },
  {
    name: 'return correlatives are unique and gapless per document type',
    run: async (q, e) => {
      const rows = await q(
        `select d.id, d.nombre, d.correlativo as siguiente, count(v.id)::int as n, count(distinct v.numero)::int as distintos, min(v.numero) as min, max(v.numero) as max
         from returns.documentos d left join returns.devoluciones v on v.documento_id = d.id where d.empresa_id = $1 group by d.id order by d.id`,
        [e.id],
      );
      const violations = rows
        .filter((d) => d.n > 0 && (d.n !== d.distintos || d.max - d.min + 1 !== d.n || d.max !== d.siguiente - 1))
        .map(
          (d) =>
            `documento ${d.id} ${d.nombre} (empresa ${e.id}): ${d.n} returns, ${d.distintos} distinct numbers ${d.min}..${d.max}, counter at ${d.siguiente}`,
        );
      return { checked: rows.reduce((s, d) => s + d.n, 0), violations };
    },
  },
  {
    name: 'stock of every product and warehouse equals the sum of its ledger movements',
    run: async (q, e) => {
      const rows = await q(
        `select coalesce(i.producto_id, m.producto_id) as producto_id, coalesce(i.bodega_id, m.bodega_id) as bodega_id, i.stock::text as stock, m.total::text as movimientos
         from (select * from inventory.inventarios where empresa_id = $1) i
         full join (select producto_id, bodega_id, sum(cantidad) as total from inventory.movimientos where empresa_id = $1 group by 1, 2) m on m.producto_id = i.producto_id and m.bodega_id = i.bodega_id
         where coalesce(i.stock, 0) <> coalesce(m.total, 0)`,
        [e.id],
      );
      const [{ n }] = (await q('select count(*)::int as n from inventory.inventarios where empresa_id = $1', [e.id])) as [Row];
      return {
        checked: n,
        violations: rows.map(
          (r) => `empresa ${e.id} producto ${r.producto_id} bodega ${r.bodega_id}: stock ${r.stock ?? 0}, ledger ${r.movimientos ?? 0}`,
        ),
      };
    },
  },
  {
    // Stock has three decimals and a line's quantity up to four: inventory rounds each line half up (its documented rule).
    // A sale with no reservation and no stock revision never moved stock through the ledger (loaded
    // from before it, its stock effect is in the opening stock): it is left out.
    name: 'the movements of sales equal what live sales hold, per product and warehouse (each line rounded to the stock’s 3 decimals)',
    run: async (q, e) => {
      const held = await q(
        `select d.id_producto as producto_id, v.bodega_id, sum(round(d.cantidad, 3))::numeric(24, 4)::text as cantidad
         from sales.ventas v join sales.venta_detalles d on d.venta_id = v.id
         where v.empresa_id = $1 and v.estado in ('Completada', 'Pendiente') and d.mueve_stock and (v.clave_reserva is not null or v.revision_stock > 0) group by 1, 2`,
        [e.id],
      );
      const moved = await q(
        `select producto_id, bodega_id, (-sum(cantidad))::numeric(24, 4)::text as cantidad from inventory.movimientos where empresa_id = $1 and origen = any($2) group by 1, 2`,
        [e.id, SALE_ORIGINS],
      );
      const [{ n }] = (await q(
        `select count(*)::int as n from sales.venta_detalles d join sales.ventas v on v.id = d.venta_id
         where v.empresa_id = $1 and d.mueve_stock and (v.clave_reserva is not null or v.revision_stock > 0)`,
        [e.id],
      )) as [Row];
      const violations = differences(
        byProductWarehouse(held),
        byProductWarehouse(moved),
        (key, h, m) => `empresa ${e.id} producto/bodega ${key}: sales hold ${h}, movements took ${m}`,
      );
      return { checked: n, violations };
    },
  },
  {
    name: 'the movements of returns equal what active returns gave back, per product and warehouse',
    run: async (q, e) => {
      const given = await q(
        `select l.id_producto as producto_id, d.bodega_id, sum(l.cantidad)::numeric(24, 4)::text as cantidad
         from returns.devoluciones d join returns.devolucion_detalles l on l.devolucion_id = d.id
         where d.empresa_id = $1 and d.enable and d.clave_stock is not null and l.mueve_stock group by 1, 2`,
        [e.id],
      );
      const moved = await q(
        `select producto_id, bodega_id, sum(cantidad)::numeric(24, 4)::text as cantidad from inventory.movimientos where empresa_id = $1 and origen in ('devolucion', 'anulacion_devolucion') group by 1, 2`,
        [e.id],
      );
      const [{ n }] = (await q('select count(*)::int as n from returns.devolucion_detalles where empresa_id = $1', [e.id])) as [Row];
      const violations = differences(
        byProductWarehouse(given),
        byProductWarehouse(moved),
        (key, g, m) => `empresa ${e.id} producto/bodega ${key}: returns gave back ${g}, movements ${m}`,
      );
      return { checked: n, violations };
    },
  },
  {
    // What a line holds is what it took from stock: its quantity rounded to the stock's 3 decimals.
    name: 'active returns never give back more than the sale still holds, per sale line',
    run: async (q, e, o) => {
      const violations: string[] = [];
      const checked = await inPages(
        q,
        'returns.devoluciones',
        e.id,
        o.pageSize,
        async (ids) => {
          const returned = await q(
            `select d.venta_id, l.venta_detalle_id, sum(l.cantidad)::numeric(24, 4)::text as cantidad, array_agg(distinct d.id) as devoluciones
             from returns.devoluciones d join returns.devolucion_detalles l on l.devolucion_id = d.id
             where d.empresa_id = $1 and d.id = any($2) and d.enable and l.mueve_stock group by 1, 2`,
            [e.id, ids],
          );
          if (returned.length === 0) return;
          // The whole of each sale line's active returns, not only this page's.
          const all = await q(
            `select l.venta_detalle_id, sum(l.cantidad)::numeric(24, 4)::text as cantidad
             from returns.devoluciones d join returns.devolucion_detalles l on l.devolucion_id = d.id
             where d.empresa_id = $1 and d.enable and l.mueve_stock and l.venta_detalle_id = any($2) group by 1`,
            [e.id, returned.map((r) => r.venta_detalle_id)],
          );
          const held = await q(
            `select d.id, d.venta_id, v.estado, case when v.estado in ('Completada', 'Pendiente') then round(d.cantidad, 3) else 0 end::numeric(24, 4)::text as cantidad
             from sales.venta_detalles d join sales.ventas v on v.id = d.venta_id where v.empresa_id = $1 and d.id = any($2)`,
            [e.id, returned.map((r) => r.venta_detalle_id)],
          );
          const heldBy = new Map(held.map((h) => [Number(h.id), h]));
          const totalBy = new Map(all.map((r) => [Number(r.venta_detalle_id), String(r.cantidad)]));
          for (const r of returned) {
            const line = heldBy.get(Number(r.venta_detalle_id));
            const total = totalBy.get(Number(r.venta_detalle_id));
            if (units(total) > units(line?.cantidad)) {
              violations.push(
                `empresa ${e.id} venta ${r.venta_id} (${line?.estado ?? 'missing'}) línea ${r.venta_detalle_id}: active returns ${r.devoluciones.join(', ')} gave back ${show(units(total))}, the sale holds ${show(units(line?.cantidad))}`,
              );
            }
          }
        },
        'enable',
      );
      return { checked, violations: [...new Set(violations)] };
    },
  },
  {
    name: 'each sale counts its active returns and their amount',
    run: async (q, e, o) => {
      const violations: string[] = [];
      const checked = await inPages(
        q,
        'sales.ventas',
        e.id,
        o.pageSize,
        async (ids) => {
          const counted = await q(
            `select id, devoluciones_activas as n, monto_devuelto::text as monto from sales.ventas where empresa_id = $1 and id = any($2) and (devoluciones_activas <> 0 or monto_devuelto <> 0)`,
            [e.id, ids],
          );
          const actual = await q(
            `select venta_id, count(*) filter (where enable)::int as n, coalesce(sum(total) filter (where enable), 0)::text as monto, bool_or(updated_at > ${olderThan(o.inFlightMs)}) as reciente
             from returns.devoluciones where empresa_id = $1 and venta_id = any($2) group by 1`,
            [e.id, ids],
          );
          const countedBy = new Map(counted.map((r) => [Number(r.id), r]));
          const actualBy = new Map(actual.map((r) => [Number(r.venta_id), r]));
          const ventas = new Set(countedBy.keys());
          for (const id of actualBy.keys()) ventas.add(id);
          for (const id of ventas) {
            // Its latest return's event may not have reached sales yet.
            if (actualBy.get(id)?.reciente) continue;
            const c = countedBy.get(id);
            const a = actualBy.get(id);
            if ((c?.n ?? 0) !== (a?.n ?? 0) || units(c?.monto) !== units(a?.monto)) {
              violations.push(
                `empresa ${e.id} venta ${id}: counts ${c?.n ?? 0} active returns for ${show(units(c?.monto))}, returns hold ${a?.n ?? 0} for ${show(units(a?.monto))}`,
              );
            }
          }
        },
        // Registrations still in flight are not counted against it.
        `not exists (select 1 from sales.devoluciones_registradas r where r.venta_id = sales.ventas.id and r.estado = 'registrada' and r.created_at > ${olderThan(o.inFlightMs)})`,
      );
      return { checked, violations };
    },
  },
  {
    name: 'every movement has a known origin and opening stock is recorded once',
    run: async (q, e) => {
      const unknown = await q(
        `select origen, count(*)::int as n from inventory.movimientos where empresa_id = $1 and not (origen = any($2)) group by 1`,
        [e.id, KNOWN_ORIGINS],
      );
      const opening = await q(
        `select producto_id, bodega_id from inventory.movimientos where empresa_id = $1 and tipo = 'inventario_inicial' group by 1, 2 having count(*) > 1`,
        [e.id],
      );
      const [{ n }] = (await q('select count(*)::int as n from inventory.movimientos where empresa_id = $1', [e.id])) as [Row];
      return {
        checked: n,
        violations: [
          ...unknown.map((r) => `empresa ${e.id}: ${r.n} movements from unknown origin ${r.origen}`),
          ...opening.map((r) => `empresa ${e.id} producto ${r.producto_id} bodega ${r.bodega_id}: opening stock twice`),
        ],
      };
    },
  },
  {
    name: 'no reservation is left open; each sale that took stock has its reservation confirmed, and only those',
    run: async (q, e, o) => {
      const open = await q(
        `select clave, created_at from inventory.reservas where empresa_id = $1 and estado = 'reservada' and created_at < ${olderThan(o.inFlightMs)}`,
        [e.id],
      );
      const violations = open.map((r) => `empresa ${e.id} reservation ${r.clave} still open since ${new Date(r.created_at).toISOString()}`);
      let checked = open.length;
      checked += await inPages(
        q,
        'sales.ventas',
        e.id,
        o.pageSize,
        async (ids) => {
          const ventas = await q('select id, clave_reserva from sales.ventas where empresa_id = $1 and id = any($2)', [e.id, ids]);
          const reservas = await q('select clave, estado from inventory.reservas where empresa_id = $1 and clave = any($2)', [
            e.id,
            ventas.map((v) => v.clave_reserva),
          ]);
          const estado = new Map(reservas.map((r) => [r.clave, r.estado]));
          for (const v of ventas)
            if (estado.get(v.clave_reserva) !== 'confirmada')
              violations.push(
                `empresa ${e.id} venta ${v.id}: reservation ${v.clave_reserva} is ${estado.get(v.clave_reserva) ?? 'missing'}`,
              );
        },
        `clave_reserva is not null and created_at < ${olderThan(o.inFlightMs)}`,
      );
      checked += await inPages(
        q,
        'inventory.reservas',
        e.id,
        o.pageSize,
        async (ids) => {
          const reservas = await q('select clave from inventory.reservas where empresa_id = $1 and id = any($2)', [e.id, ids]);
          const ventas = await q('select clave_reserva from sales.ventas where empresa_id = $1 and clave_reserva = any($2)', [
            e.id,
            reservas.map((r) => r.clave),
          ]);
          const found = new Set(ventas.map((v) => v.clave_reserva));
          for (const r of reservas)
            if (!found.has(r.clave)) violations.push(`empresa ${e.id} reservation ${r.clave} confirmed without a sale`);
        },
        `origen = 'venta' and estado = 'confirmada'`,
      );
      return { checked, violations };
    },
  },
  {
    name: 'the webhook inbox is processed: no delivery left unprocessed',
    run: async (q, e, o) => {
      const pending = await q(
        `select id from webhook_ingest.entregas where empresa_id = $1 and estado = 'recibida' and recibida_at < ${olderThan(o.inFlightMs)} order by id`,
        [e.id],
      );
      const [{ n }] = (await q('select count(*)::int as n from webhook_ingest.entregas where empresa_id = $1', [e.id])) as [Row];
      return {
        checked: n,
        violations:
          pending.length > 0
            ? [
                `empresa ${e.id}: ${pending.length} deliveries still recibida: ${pending
                  .slice(0, 20)
                  .map((r) => r.id)
                  .join(', ')}`,
              ]
            : [],
      };
    },
  },
  {
    name: 'every outbox is published',
    global: true,
    run: async (_q, _e, o) => {
      const violations: string[] = [];
      let checked = 0;
      for (const q of o.databases) {
        const schemas = await q(`select table_schema as schema from information_schema.tables where table_name = 'outbox' order by 1`);
        for (const { schema } of schemas) {
          const [row] = (await q(
            `select count(*)::int as n, count(*) filter (where published_at is null and created_at < ${olderThan(o.inFlightMs)})::int as pending from ${schema}.outbox`,
          )) as [Row];
          checked += row.n;
          if (row.pending > 0) violations.push(`${schema}: ${row.pending} events unpublished`);
        }
      }
      return { checked, violations };
    },
  },
  {
    name: 'money is exact: total = sub_total + iva on every sale and line, and a sale sums its lines',
    run: async (q, e, o) => {
      const violations: string[] = [];
      // A range of ids and a lateral join per sale: one index scan of the page's lines.
      const checked = await inPages(q, 'sales.ventas', e.id, o.pageSize, async (_ids, { first, last }) => {
        const rows = await q(
          `select v.id, v.total <> v.sub_total + v.iva as venta, d.lineas, v.total <> d.t or v.sub_total <> d.s or v.iva <> d.i as suma
           from sales.ventas v cross join lateral (
             select sum(l.total) as t, sum(l.sub_total) as s, sum(l.iva) as i, array_agg(l.id order by l.id) filter (where l.total <> l.sub_total + l.iva) as lineas
             from sales.venta_detalles l where l.venta_id = v.id
           ) d
           where v.empresa_id = $1 and v.id between $2 and $3 and (v.total <> v.sub_total + v.iva or d.lineas is not null or v.total <> d.t or v.sub_total <> d.s or v.iva <> d.i)`,
          [e.id, first, last],
        );
        for (const r of rows) {
          if (r.venta) violations.push(`empresa ${e.id} venta ${r.id}: total ≠ sub_total + iva`);
          for (const linea of r.lineas ?? []) violations.push(`empresa ${e.id} venta ${r.id} línea ${linea}: total ≠ sub_total + iva`);
          if (r.suma) violations.push(`empresa ${e.id} venta ${r.id}: amounts ≠ sum of its lines`);
        }
      });
      return { checked, violations };
    },
  },
  {
    name: 'no stock below zero where the company forbids selling without it (platform orders and annulled returns aside)',
    run: async (q, e) => {
      if (e.venderSinStock) return { checked: 0, violations: [] };
      const rows = await q(
        `select i.producto_id, i.bodega_id, i.stock::text as stock from inventory.inventarios i where i.empresa_id = $1 and i.stock < 0
         and not exists (select 1 from inventory.movimientos m where m.empresa_id = i.empresa_id and m.producto_id = i.producto_id and m.bodega_id = i.bodega_id and m.origen = any($2))`,
        [e.id, BELOW_ZERO_ORIGINS],
      );
      const [{ n }] = (await q('select count(*)::int as n from inventory.inventarios where empresa_id = $1', [e.id])) as [Row];
      return {
        checked: n,
        violations: rows.map((r) => `empresa ${e.id} producto ${r.producto_id} bodega ${r.bodega_id}: stock ${r.stock}`),
      };
    },
  },
];

async function runChecks(checks: Check[], options: AuditOptions, settings: Omit<Settings, 'databases'>): Promise<InvariantResult[]> {
  const snapshots = await SchemaClients.connect(options, { snapshot: true });
  try {
    const q = snapshots.q;
    const empresas = (
      await q('select id, vender_sin_stock from gateway.empresas where ($1::int is null or id = $1) order by id', [
        options.empresaId ?? null,
      ])
    ).map((r) => ({ id: Number(r.id), venderSinStock: Boolean(r.vender_sin_stock) }));
    if (options.empresaId !== undefined && empresas.length === 0) throw new Error(`No existe la empresa ${options.empresaId}`);
    const results: InvariantResult[] = [];
    for (const check of checks) {
      const result: InvariantResult = { name: check.name, checked: 0, violations: [] };
      const started = performance.now();
      for (const empresa of check.global ? [empresas[0] ?? { id: 0, venderSinStock: true }] : empresas) {
        try {
          const { checked, violations } = await check.run(q, empresa, { ...settings, databases: snapshots.each });
          result.checked += checked;
          for (const violation of violations) result.violations.push(violation);
        } catch (err) {
          result.violations.push(`check failed to run${check.global ? '' : ` for empresa ${empresa.id}`}: ${(err as Error).message}`);
        }
      }
      results.push({ ...result, ms: Math.round(performance.now() - started) });
    }
    return results;
  } finally {
    await snapshots.end();
  }
}

/**
 * Checks the books of every company (or one) against the invariants, read-only: nothing it runs
 * can write. With every schema in one database it reads one snapshot; with schemas on several
 * databases it reads one snapshot of each, and a violation is reported only when a second look,
 * `confirmAfterMs` later, still finds it. Each result counts the items checked and names each
 * violation with its ids.
 */
export async function auditBooks(options: AuditOptions): Promise<InvariantResult[]> {
  const settings = { pageSize: 5_000, inFlightMs: 60_000, ...options };
  const confirmAfterMs = options.confirmAfterMs ?? (databasesOf(options).length > 1 ? 5_000 : 0);
  const first = await runChecks(CHECKS, options, settings);
  const failed = CHECKS.filter((_, i) => first[i]!.violations.length > 0);
  if (confirmAfterMs === 0 || failed.length === 0) return first;
  await new Promise((resolve) => setTimeout(resolve, confirmAfterMs));
  const again = new Map((await runChecks(failed, options, settings)).map((r) => [r.name, r]));
  return first.map((r) => {
    const second = again.get(r.name);
    if (!second) return r;
    const persisting = new Set(second.violations);
    return { ...r, violations: r.violations.filter((v) => persisting.has(v)) };
  });
}

/** One line per invariant: name, items checked, violations (the first `limit` spelled out). */
export function formatInvariants(results: InvariantResult[], limit = 10): string {
  return results
    .map((r) => {
      const head = `${r.violations.length === 0 ? 'ok  ' : 'FAIL'} ${r.name} (${r.checked} checked${r.ms === undefined ? '' : `, ${(r.ms / 1000).toFixed(1)} s`})`;
      if (r.violations.length === 0) return head;
      const shown = r.violations.slice(0, limit).map((v) => `       - ${v}`);
      return [head, ...shown, ...(r.violations.length > limit ? [`       … ${r.violations.length - limit} more`] : [])].join('\n');
    })
    .join('\n');
}
