import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import type { SeedOutput } from '@erp/back-office';
import { publishEvent } from '@erp/bus';
import { isAppError, returnsAdminSubjects, salesAdminSubjects } from '@erp/contracts';
import { Stack, json } from '../support/stack';
import { eventually } from '@erp/testing';
import { API, SALES_KEY_A, ledgerOf, refsOf, salesFixture, type SalesRefs } from '../support/sales-fixture';
import { stockOf } from '../../services/inventory/test/inventory.factories';

const ROOT = path.resolve(__dirname, '../..');
const ctx = { requestId: 'returns-stock' };

/** Company A with a completed sale (4 mice, 2 books) and a pending one (10 bags of cement, owed in full). */
function fixture() {
  const f = salesFixture();
  const [a] = f.empresas as Array<Record<string, unknown>>;
  const base = { sucursal: 'centro', bodega: 'principal', documento: 'factura', canal: 'tienda' };
  a!.ventas = [
    {
      ref: 'v1',
      fecha: '2026-04-01',
      estado: 'Completada',
      ...base,
      detalles: [
        { producto: 'mouse', cantidad: 4 },
        { producto: 'libro', cantidad: 2 },
      ],
    },
    { ref: 'v2', fecha: '2026-04-02', estado: 'Pendiente', cliente: 'juan', ...base, detalles: [{ producto: 'cemento', cantidad: 10 }] },
  ];
  return { empresas: [a] };
}

describe('returns move stock exactly once and credit the sale', () => {
  let stack: Stack;
  let seeded: SeedOutput;
  let a: SalesRefs;
  let v1: number;
  let v2: number;

  const create = (over: Record<string, unknown>) =>
    stack.admin.request(
      returnsAdminSubjects,
      'returns.admin.create',
      { empresa_id: a.id, id_venta: v1, fecha: '2026-04-05', tipo: 'devolucion', detalles: [], ...over } as never,
      ctx,
    );
  const annul = (id: number) =>
    stack.admin.request(returnsAdminSubjects, 'returns.admin.annul', { empresa_id: a.id, id_devolucion: id }, ctx);
  const stock = (producto: string) => stockOf(stack, a.productos[producto]!, a.bodegas.principal!);
  const saldo = async (id: number) => (await json(await stack.api(`${API}/sales/${id}`, { key: SALES_KEY_A }))).data.saldo as number;
  const snapshot = async () =>
    (
      await stack.query(`select
        (select count(*)::int from returns.devoluciones) as devoluciones,
        (select count(*)::int from returns.devolucion_detalles) as detalles,
        (select count(*)::int from returns.outbox) as eventos,
        (select coalesce(string_agg(prefijo || correlativo, ','), '') from returns.documentos) as series,
        (select count(*)::int from inventory.movimientos) as movimientos,
        (select coalesce(sum(stock), 0)::text from inventory.inventarios) as stock,
        (select string_agg(id || ':' || monto_devuelto || ':' || devoluciones_activas, ',' order by id) from sales.ventas) as ventas`)
    )[0];

  beforeAll(async () => {
    stack = await Stack.start({ services: ['gateway', 'inventory', 'sales', 'returns'] });
    seeded = await stack.seed(fixture());
    a = refsOf(seeded, 'a');
    const ventas = seeded.empresas.a!.ventas as Record<string, number>;
    v1 = ventas.v1!;
    v2 = ventas.v2!;
  });
  afterAll(() => stack.stop());

  it('puts the returned stock back in the sale’s warehouse once, and takes it out again once when annulled', async () => {
    expect(await stock('mouse')).toBe('146.000');
    const { devolucion } = await create({ detalles: [{ id_producto: a.productos.mouse, cantidad: 1.5 }] });
    expect(await stock('mouse')).toBe('147.500');
    await stack.settled();
    expect(await stock('mouse')).toBe('147.500');

    expect(await annul(devolucion.id)).toMatchObject({ enable: 0, estado: 'Anulada' });
    expect(await stock('mouse')).toBe('146.000');
    await annul(devolucion.id);
    await stack.settled();
    expect(await stock('mouse')).toBe('146.000');
    expect(await ledgerOf(stack, a.productos.mouse!, a.bodegas.principal!)).toEqual({ stock: '146.000', movimientos: 4 });
  });

  it('moves nothing more when the events of a return are delivered again', async () => {
    const { devolucion } = await create({ detalles: [{ id_producto: a.productos.mouse, cantidad: 1 }] });
    await annul(devolucion.id);
    await stack.settled();
    const before = await snapshot();
    const payload = { empresa_id: a.id, id_devolucion: devolucion.id, id_venta: v1, total: devolucion.total.toFixed(2) };
    for (const subject of ['events.returns.return.created', 'events.returns.return.annulled'] as const) {
      await publishEvent(stack.admin, subject, payload, { msgId: randomUUID() });
    }
    await stack.settled();
    expect(await snapshot()).toEqual(before);
  });

  it('answers a repeated request with the same reference with the same return, stocked once', async () => {
    const first = await create({ referencia: 'CLI-7', detalles: [{ id_producto: a.productos.libro, cantidad: 1 }] });
    const again = await create({ referencia: 'CLI-7', detalles: [{ id_producto: a.productos.libro, cantidad: 1 }] });
    expect([first.idempotent, again.idempotent, again.devolucion.id]).toEqual([false, true, first.devolucion.id]);
    expect(await stock('libro')).toBe('39.000');
  });

  it('refuses an over-return with the line and the amounts, and changes nothing anywhere', async () => {
    await stack.settled();
    const before = await snapshot();
    const err = await create({
      detalles: [
        { id_producto: a.productos.mouse, cantidad: 1 },
        { id_producto: a.productos.libro, cantidad: 1.001 },
      ],
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isAppError(err) && [err.code, err.details]).toEqual([
      'BUSINESS_RULE',
      { 'detalles.1.cantidad': ['Excede lo que queda por devolver: vendido 2, ya devuelto 1, disponible 1'] },
    ]);
    await stack.settled();
    expect(await snapshot()).toEqual(before);
  });

  it('lets concurrent returns of a line take together no more than was sold', async () => {
    const before = await stock('mouse');
    const outcomes = await Promise.allSettled(
      Array.from({ length: 6 }, () => create({ detalles: [{ id_producto: a.productos.mouse, cantidad: 1 }] })),
    );
    // 4 sold, and the earlier returns of this line are annulled: 4 of the 6 fit.
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(4);
    expect(outcomes.filter((o) => o.status === 'rejected').every((o) => isAppError((o as PromiseRejectedResult).reason))).toBe(true);
    expect(Number(await stock('mouse')) - Number(before)).toBe(4);
  });

  it('credits a pending sale’s saldo with its active returns, price adjustments included, and gives it back on annulment', async () => {
    expect(await saldo(v2)).toBe(98.5);
    const goods = await create({ id_venta: v2, detalles: [{ id_producto: a.productos.cemento, cantidad: 4 }] });
    const adjustment = await create({
      id_venta: v2,
      tipo: 'descuento_ajuste',
      detalles: [{ id_producto: a.productos.cemento, cantidad: 2, precio: 1 }],
    });
    expect([goods.devolucion.total, adjustment.devolucion.total]).toEqual([39.4, 2]);
    expect(await stock('cemento')).toBe('94.000'); // 100 − 10 + 4: the adjustment moves none
    await eventually(async () => expect(await saldo(v2)).toBe(57.1));
    await annul(goods.devolucion.id);
    await eventually(async () => expect(await saldo(v2)).toBe(96.5));
    expect(await stock('cemento')).toBe('90.000');
  });

  it('creates and annuls returns from the admin CLI', async () => {
    const cli = async (...args: string[]) => {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['--conditions=development', '--import', 'tsx', 'services/admin/src/cli.ts', ...args],
        {
          cwd: ROOT,
          env: { ...process.env, NATS_URL: stack.iso.natsUrl, SUBJECT_PREFIX: stack.iso.subjectPrefix, LOG_LEVEL: 'silent' },
        },
      );
      return JSON.parse(stdout);
    };
    const usuario = (seeded.empresas.a!.usuarios as Record<string, number>).admin!;
    const created = await cli(
      'returns',
      'create',
      String(a.id),
      String(v1),
      '2026-04-09',
      'devolucion',
      `${a.productos.libro}:1`,
      '--observaciones',
      'Página rota',
      '--usuario',
      String(usuario),
    );
    expect(created).toMatchObject({
      idempotent: false,
      devolucion: { tipo: 'devolucion', observaciones: 'Página rota', nombre_usuario: 'Admin A', total: 12, estado: 'Confirmada' },
    });
    expect(await stock('libro')).toBe('40.000');
    expect(await cli('returns', 'annul', String(a.id), String(created.devolucion.id))).toMatchObject({
      id: created.devolucion.id,
      estado: 'Anulada',
    });
    expect(await stock('libro')).toBe('39.000');
  });

  it('keeps a sale with active returns from being annulled; once they are annulled, the sale’s annulment returns its stock exactly', async () => {
    await stack.settled();
    const before = await snapshot();
    const annulSale = () => stack.admin.request(salesAdminSubjects, 'sales.admin.annul', { empresa_id: a.id, id_venta: v1 }, ctx);
    const refused = await annulSale().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isAppError(refused) && [refused.code, refused.message]).toEqual([
      'BUSINESS_RULE',
      'La venta tiene devoluciones activas: anúlelas antes de anular la venta',
    ]);
    expect(await snapshot()).toEqual(before);

    const active = await stack.query<{ id: number }>('select id from returns.devoluciones where venta_id = $1 and enable order by id', [
      v1,
    ]);
    for (const { id } of active) await annul(id);
    await stack.settled();
    expect(await annulSale()).toMatchObject({ estado: 'Anulada' });
    expect([await stock('mouse'), await stock('libro')]).toEqual(['150.000', '40.000']);
    const late = await create({ detalles: [{ id_producto: a.productos.mouse, cantidad: 1 }] }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isAppError(late) && late.message).toBe('La venta está anulada');
  });
});
