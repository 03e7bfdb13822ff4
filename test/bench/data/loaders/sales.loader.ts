import { addToDailySummarySql, DAILY_SUMMARY_TRIGGERS } from '@erp/sales';
import type { Random } from '@erp/testing';
import { copyRows, deferIndexes, nextId, quoteIdent, RowQueue, syncIdentity, type CopyValue } from '../copy';
import { missingTables, type LoadedCompany, type Loader, type ReturnableSale } from '../context';
import { cents, netOfTax } from '../money';
import { addDays, timestampAt } from '../time';
import { FIRST_NAMES, LAST_NAMES } from '../words';

const SCHEMA = 'sales';
const TABLES = ['documentos', 'canales', 'clientes', 'ventas', 'venta_detalles'] as const;
const LINES_PER_SALE = 3;
const HISTORY_DAYS = 730;

/** Document types of every branch: four that issue sales (with their share of them) and one for quotations. */
const DOCUMENT_TYPES = [
  { nombre: 'Ticket', prefijo: 'T-', share: 0.5, cotizacion: false },
  { nombre: 'Factura', prefijo: 'F-', share: 0.3, cotizacion: false },
  { nombre: 'Crédito fiscal', prefijo: 'CCF-', share: 0.15, cotizacion: false },
  { nombre: 'Nota de remisión', prefijo: 'NR-', share: 0.05, cotizacion: false },
  { nombre: 'Cotización', prefijo: 'COT-', share: 0, cotizacion: true },
] as const;
const CHANNELS = ['Tienda', 'Teléfono', 'En línea', 'Mayoreo'];
const PAYMENT_METHODS = ['Efectivo', 'Tarjeta', 'Transferencia'];

interface Documento {
  id: number;
  sucursalId: number;
  nombre: string;
  prefijo: string;
  /** Last number issued. */
  numero: number;
}

interface Cliente {
  id: number;
  nombre: string;
}

/** 85 % completed, 7 % pending (with a customer), 4 % annulled, 4 % quotations. */
function pickEstado(rnd: Random): 'Completada' | 'Pendiente' | 'Anulada' | 'Cotizacion' {
  const r = rnd.next();
  return r < 0.85 ? 'Completada' : r < 0.92 ? 'Pendiente' : r < 0.96 ? 'Anulada' : 'Cotizacion';
}

/**
 * Document types, channels and customers of every company, then its sales over the last two
 * years, oldest first, so ids, dates and each document type's numbers grow together, with three
 * lines each. Amounts follow the invoicing rules exactly (tax-inclusive prices, per-line tax,
 * total = sub_total + iva), and each document type's counter continues after its last number.
 * Historical sales did not go through reservations: their stock effect is already in the
 * loaded stock, so they carry no `clave_reserva` and write no ledger movement.
 */
export const salesLoader: Loader = {
  schema: SCHEMA,
  async missing(client) {
    const absent = await missingTables(client, SCHEMA, TABLES);
    return absent.length > 0 ? `tables ${absent.join(', ')} do not exist` : undefined;
  },
  async load({ client, connect, companies, random, progress, today }) {
    const rnd = random.fork(SCHEMA);
    const deferred = await deferIndexes(client, SCHEMA, [...TABLES]);
    let documentoId = await nextId(client, SCHEMA, 'documentos');
    let canalId = await nextId(client, SCHEMA, 'canales');
    let clienteId = await nextId(client, SCHEMA, 'clientes');
    let ventaId = await nextId(client, SCHEMA, 'ventas');
    let detalleId = await nextId(client, SCHEMA, 'venta_detalles');
    const start = addDays(today, -HISTORY_DAYS + 1);
    // Dates of the history computed once: a sale's date and time are then a lookup and one Date.
    const days = Array.from({ length: HISTORY_DAYS }, (_, d) => addDays(start, d));
    const dayMs = days.map((d) => Date.parse(`${d}T00:00:00Z`));
    const expiry = days.map((d) => addDays(d, 15));
    const fiscalCutoff = HISTORY_DAYS - 7;
    const openedAt = timestampAt(addDays(start, -30), 8 * 3600);

    const documentos = new Map<number, Documento[]>();
    const canales = new Map<number, Array<{ id: number; nombre: string }>>();
    const clientes = new Map<number, Cliente[]>();
    const clienteRows: CopyValue[][] = [];
    for (const company of companies) {
      const docs: Documento[] = [];
      for (const sucursal of company.sucursales) {
        for (const type of DOCUMENT_TYPES) {
          // Prefixes carry the branch when there are several, as correlatives are per document type.
          const prefijo = company.sucursales.length > 1 ? `${type.prefijo}${company.sucursales.indexOf(sucursal) + 1}-` : type.prefijo;
          docs.push({ id: documentoId++, sucursalId: sucursal.id, nombre: type.nombre, prefijo, numero: 0 });
        }
      }
      documentos.set(company.empresaId, docs);
      canales.set(
        company.empresaId,
        CHANNELS.map((nombre) => ({ id: canalId++, nombre })),
      );
      company.ventas = {
        documentos: docs.map((d) => ({ id: d.id, sucursalId: d.sucursalId, nombre: d.nombre, cotizacion: d.nombre === 'Cotización' })),
        canales: canales.get(company.empresaId)!,
        devolvibles: [],
      };
      const list: Cliente[] = [];
      for (let i = 0; i < company.plan.customers; i++) {
        const nombre = `${rnd.pick(FIRST_NAMES)} ${rnd.pick(LAST_NAMES)} ${rnd.pick(LAST_NAMES)}`;
        const cliente = { id: clienteId++, nombre };
        list.push(cliente);
        const limite = rnd.chance(0.3) ? rnd.int(1_000, 20_000) * 100 : 0;
        clienteRows.push([
          cliente.id,
          company.empresaId,
          nombre,
          rnd.chance(0.8) ? `cliente${cliente.id}@correo.example` : null,
          cents(limite),
          true,
          openedAt,
          openedAt,
        ]);
      }
      clientes.set(company.empresaId, list);
    }

    const counts: Record<string, number> = {};
    counts['sales.canales'] = await copyRows(
      client,
      SCHEMA,
      'canales',
      ['id', 'empresa_id', 'nombre', 'activo', 'created_at', 'updated_at'],
      companies.flatMap((c) => canales.get(c.empresaId)!.map((k) => [k.id, c.empresaId, k.nombre, true, openedAt, openedAt])),
    );
    counts['sales.clientes'] = await copyRows(
      client,
      SCHEMA,
      'clientes',
      ['id', 'empresa_id', 'nombre', 'email', 'limite_credito', 'activo', 'created_at', 'updated_at'],
      clienteRows,
    );

    // Sales and their lines are generated together; the lines go to their own COPY on a second connection.
    const lineRows = new RowQueue(20_000);
    async function* saleRows(company: LoadedCompany): AsyncGenerator<CopyValue[]> {
      const p = company.productos!;
      const docs = documentos.get(company.empresaId)!;
      const chans = canales.get(company.empresaId)!;
      const custs = clientes.get(company.empresaId)!;
      const sellers = company.usuarios.filter((u) => u.rol !== 'Supervisor');
      const docsOf = new Map(company.sucursales.map((s) => [s.id, docs.filter((d) => d.sucursalId === s.id)]));
      const sucursalOf = new Map(company.sucursales.map((s) => [s.id, s]));
      const n = company.plan.sales;
      for (let i = 0; i < n; i++) {
        const id = ventaId++;
        const day = Math.floor((i * HISTORY_DAYS) / n);
        const fecha = days[day]!;
        const createdAt = new Date(dayMs[day]! + rnd.int(28_800, 72_000) * 1000).toISOString();
        const bodega = company.bodegas[rnd.skewed(company.bodegas.length)]!;
        const estado = pickEstado(rnd);
        // About plan.returns of the company's completed sales (85 % of all) are returned later.
        const returned = estado === 'Completada' && company.plan.returns > 0 && rnd.chance(Math.min(1, company.plan.returns / (0.85 * n)));
        let returnable: ReturnableSale['line'] | undefined;
        const branchDocs = docsOf.get(bodega.sucursalId)!;
        let doc: Documento;
        if (estado === 'Cotizacion') doc = branchDocs[DOCUMENT_TYPES.length - 1]!;
        else {
          let r = rnd.next();
          let k = 0;
          while (k < DOCUMENT_TYPES.length - 2 && r >= DOCUMENT_TYPES[k]!.share) r -= DOCUMENT_TYPES[k++]!.share;
          doc = branchDocs[k]!;
        }
        const numero = ++doc.numero;
        const correlativo = `${doc.prefijo}${numero}`;
        const cliente = estado === 'Pendiente' || rnd.chance(0.35) ? custs[rnd.skewed(custs.length)]! : null;
        const canal = rnd.chance(0.8) ? rnd.pick(chans) : null;
        const usuario = rnd.pick(sellers);

        let subTotal = 0;
        let iva = 0;
        let total = 0;
        let descuento = 0;
        let exenta = 0;
        const lineas: object[] = [];
        const used = new Set<number>();
        for (let l = 0; l < LINES_PER_SALE; l++) {
          let index = rnd.skewed(p.count);
          while (used.has(index)) index = (index + 1) % p.count;
          used.add(index);
          const servicio = p.servicio[index] === 1;
          const cantidad = servicio ? 1 : rnd.int(1, 6);
          const precio = p.precioCents[index]!;
          const gross = cantidad * precio;
          const desc = rnd.chance(0.1) ? Math.round(gross * 0.05) : 0;
          const rate = p.impuesto[index]! >= 0 ? p.impuesto[index]! : company.iva;
          const lineTotal = gross - desc;
          const lineSub = netOfTax(lineTotal, rate);
          const lineIva = lineTotal - lineSub;
          const lineExenta = rate === 0 ? lineTotal : 0;
          subTotal += lineSub;
          iva += lineIva;
          total += lineTotal;
          descuento += desc;
          exenta += lineExenta;
          const line = {
            id_producto: p.firstId + index,
            codigo: p.codigo[index]!,
            nombre: p.nombre[index]!,
            cantidad: String(cantidad),
            precio: cents(precio),
            descuento: cents(desc),
            porcentaje_impuesto: String(rate),
            sub_total: cents(lineSub),
            iva: cents(lineIva),
            exenta: cents(lineExenta),
            total: cents(lineTotal),
          };
          lineas.push(line);
          if (l === 0 && returned) returnable = { detalleId, productIndex: index, cantidad, precioCents: precio, rate, servicio };
          lineRows.push([
            detalleId++,
            id,
            company.empresaId,
            l + 1,
            line.id_producto,
            line.codigo,
            line.nombre,
            null,
            !servicio,
            null,
            `${cantidad}.0000`,
            `${line.precio}00`,
            line.descuento,
            `${rate}.0000`,
            line.sub_total,
            line.iva,
            line.total,
            line.exenta,
            `${cents(p.costoCents[index]!)}00`,
            createdAt,
            createdAt,
          ]);
        }
        const pagado = estado === 'Pendiente' ? (rnd.chance(0.5) ? 0 : Math.floor(total / 2)) : total;
        const montoPago = estado === 'Cotizacion' ? null : cents(pagado);
        const saldo = estado === 'Pendiente' ? cents(total - pagado) : '0.00';
        const formaPago = estado === 'Pendiente' ? 'Crédito' : rnd.pick(PAYMENT_METHODS);
        const referencia = rnd.chance(0.3) ? `ECOM-${company.empresaId}-${i + 1}` : null;
        const totals = {
          sub_total: cents(subTotal),
          iva: cents(iva),
          total: cents(total),
          descuento: cents(descuento),
          exenta: cents(exenta),
        };
        const nombreCliente = cliente?.nombre ?? 'Consumidor Final';
        const sucursal = sucursalOf.get(bodega.sucursalId)!;
        const documento = {
          version: 1,
          emitido_en: createdAt,
          empresa: { id: company.empresaId, nombre: company.plan.nombre },
          documento: { id: doc.id, nombre: doc.nombre, prefijo: doc.prefijo, numero, correlativo },
          fecha,
          fecha_expiracion: estado === 'Cotizacion' ? expiry[day]! : null,
          estado: estado === 'Anulada' ? 'Completada' : estado,
          cotizacion: estado === 'Cotizacion',
          sucursal: { id: sucursal.id, nombre: sucursal.nombre },
          bodega: { id: bodega.id, nombre: bodega.nombre },
          canal: canal ? { id: canal.id, nombre: canal.nombre } : null,
          cliente: cliente ? { id: cliente.id, nombre: cliente.nombre } : { id: null, nombre: nombreCliente },
          usuario: { id: usuario.id, nombre: usuario.nombre },
          referencia_externa: referencia,
          forma_pago: formaPago,
          observaciones: null,
          lineas,
          totales: totals,
          pago: { monto_pago: montoPago, cambio: '0.00', saldo },
        };
        const old = day < fiscalCutoff;
        if (returnable) company.ventas!.devolvibles.push({ ventaId: id, day, bodegaId: bodega.id, nombreCliente, line: returnable });
        await lineRows.room();
        yield [
          id,
          company.empresaId,
          bodega.sucursalId,
          bodega.id,
          doc.id,
          canal?.id ?? null,
          cliente?.id ?? null,
          usuario.id,
          fecha,
          correlativo,
          numero,
          referencia,
          estado,
          estado === 'Cotizacion',
          'api',
          formaPago,
          null,
          montoPago,
          '0.00',
          estado === 'Cotizacion' ? expiry[day]! : null,
          totals.sub_total,
          totals.iva,
          totals.total,
          totals.descuento,
          totals.exenta,
          saldo,
          nombreCliente,
          usuario.nombre,
          usuario.rol === 'Vendedor' ? usuario.nombre : null,
          doc.nombre,
          JSON.stringify(documento),
          estado === 'Completada' && old && rnd.chance(0.6),
          null,
          estado === 'Anulada' ? createdAt : null,
          createdAt,
          createdAt,
        ];
      }
    }

    const SALE_COLUMNS = [
      'id',
      'empresa_id',
      'sucursal_id',
      'bodega_id',
      'documento_id',
      'canal_id',
      'cliente_id',
      'usuario_id',
      'fecha',
      'correlativo',
      'numero',
      'referencia_externa',
      'estado',
      'cotizacion',
      'origen',
      'forma_pago',
      'observaciones',
      'monto_pago',
      'cambio',
      'fecha_expiracion',
      'sub_total',
      'iva',
      'total',
      'descuento',
      'exenta',
      'saldo',
      'nombre_cliente',
      'nombre_usuario',
      'nombre_vendedor',
      'nombre_documento',
      'documento',
      'documento_fiscal_emitido',
      'clave_reserva',
      'stock_devuelto_at',
      'created_at',
      'updated_at',
    ];
    const LINE_COLUMNS = [
      'id',
      'venta_id',
      'empresa_id',
      'linea',
      'id_producto',
      'codigo',
      'nombre_producto',
      'descripcion',
      'mueve_stock',
      'id_presentacion',
      'cantidad',
      'precio',
      'descuento',
      'porcentaje_impuesto',
      'sub_total',
      'iva',
      'total',
      'exenta',
      'costo',
      'created_at',
      'updated_at',
    ];
    const totalSales = companies.reduce((n, c) => n + c.plan.sales, 0);
    const salesStep = progress.step('sales.ventas + venta_detalles', totalSales);
    // The daily summary's triggers would upsert once per copied sale: the loaded sales are added
    // to the summary in one statement after the COPY instead (like the indexes, a failed load
    // leaves them off; the database is loaded again from scratch).
    const firstVentaId = ventaId;
    const summaryTriggers = async (action: 'disable' | 'enable') => {
      for (const t of DAILY_SUMMARY_TRIGGERS)
        await client.query(`alter table ${quoteIdent(SCHEMA)}.ventas ${action} trigger ${quoteIdent(t)}`);
    };
    await summaryTriggers('disable');
    const linesClient = await connect();
    try {
      const [ventas, detalles] = await Promise.all([
        (async () => {
          try {
            let rows = 0;
            for (const company of companies) rows += await copyRows(client, SCHEMA, 'ventas', SALE_COLUMNS, saleRows(company), salesStep);
            return rows;
          } finally {
            lineRows.close();
          }
        })(),
        copyRows(linesClient, SCHEMA, 'venta_detalles', LINE_COLUMNS, lineRows),
      ]);
      counts['sales.ventas'] = ventas;
      counts['sales.venta_detalles'] = detalles;
    } finally {
      await linesClient.end();
    }
    salesStep.done();
    await client.query('begin');
    await client.query(`set local search_path to ${quoteIdent(SCHEMA)}, public`);
    counts['sales.ventas_resumen_diario'] = (await client.query(addToDailySummarySql(firstVentaId))).rowCount ?? 0;
    await client.query('commit');
    await summaryTriggers('enable');

    // Documents after the sales: each counter is the next number to issue.
    counts['sales.documentos'] = await copyRows(
      client,
      SCHEMA,
      'documentos',
      ['id', 'empresa_id', 'sucursal_id', 'nombre', 'prefijo', 'correlativo', 'activo', 'solo_cotizacion', 'created_at', 'updated_at'],
      companies.flatMap((c) =>
        documentos
          .get(c.empresaId)!
          .map((d) => [
            d.id,
            c.empresaId,
            d.sucursalId,
            d.nombre,
            d.prefijo,
            d.numero + 1,
            true,
            d.nombre === 'Cotización',
            openedAt,
            openedAt,
          ]),
      ),
    );

    const step = progress.step('sales indexes', deferred.count);
    await deferred.restore(step);
    step.done();
    for (const table of TABLES) await syncIdentity(client, SCHEMA, table);
    return counts;
  },
};
