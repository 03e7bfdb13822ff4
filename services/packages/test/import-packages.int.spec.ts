import { sql } from 'kysely';
import { gatewayDirectorySubjects, inventorySubjects } from '@erp/contracts';
import { harness, tenant, type Harness } from '@erp/testing';
import { migrations } from '../src/db/migrations';
import type { PackagesDb } from '../src/db/tables';
import { importPackagesHandler } from '../src/handlers/import-packages.handler';
import { PACKAGES_SCHEMA } from '../src/db/tables';

/** Stand-ins for the two services an import asks: branches 1 and 2 exist, user code "AS-01" is user 77. */
const inventoryResolve = { 'inventory.sucursal.resolve': inventorySubjects['inventory.sucursal.resolve'] };

const ctx = (empresaId: number) => tenant(empresaId);

const item = (wr: string, over: Record<string, unknown> = {}) => ({
  cliente: 'Cliente',
  codigo_asesor: 'AS-01',
  wr,
  guia: `G-${wr}`,
  embalaje: 'Caja',
  piezas: 1,
  peso: 2.125,
  precio: 10.1,
  cuenta_a_terceros: 0.2,
  otros: 0,
  total: 10.3,
  id_sucursal: 1,
  ...over,
});

describe('packages.import handler against Postgres and NATS', () => {
  let h: Harness<PackagesDb>;
  const statements: string[] = [];
  let sut: ReturnType<typeof importPackagesHandler>;

  beforeAll(async () => {
    h = await harness<PackagesDb>('packages', {
      schema: PACKAGES_SCHEMA,
      migrations,
      onQuery: (text) => statements.push(text.slice(0, 40)),
    });
    h.bus.serve(
      inventoryResolve,
      {
        'inventory.sucursal.resolve': async ({ items }) =>
          items.map((q) =>
            'id_sucursal' in q && q.id_sucursal <= 2
              ? { ok: true as const, id_sucursal: q.id_sucursal, nombre: `S${q.id_sucursal}` }
              : { ok: false as const, message: 'La sucursal no existe o está inactiva' },
          ),
      },
      { queue: 'inventory' },
    );
    h.bus.serve(
      gatewayDirectorySubjects,
      { 'gateway.usuario.by-codigo': async ({ codigos }) => Object.fromEntries(codigos.filter((c) => c === 'AS-01').map((c) => [c, 77])) },
      { queue: 'gateway' },
    );
    sut = importPackagesHandler(h.db, h.bus);
  });

  afterAll(() => h?.close());

  const countPaquetes = async (empresaId: number) =>
    Number(
      (await sql<{ n: number }>`select count(*)::int as n from packages.paquetes where empresa_id = ${empresaId}`.execute(h.db)).rows[0]!.n,
    );

  it('imports 500 new packages in a handful of SQL statements, with one outbox event', async () => {
    statements.length = 0;
    const reply = await sut({ packages: Array.from({ length: 500 }, (_, i) => item(`BULK-${i}`)) }, ctx(1));
    expect(reply.created).toBe(500);
    expect(reply.items.map((i) => i.index)).toEqual(Array.from({ length: 500 }, (_, i) => i));
    // begin, insert … on conflict do nothing, outbox insert, commit (nothing pre-existed, so no lookup).
    expect(statements).toEqual([
      'begin',
      expect.stringMatching(/^insert into "packages"."paquetes"/),
      expect.stringMatching(/^insert into "packages"."outbox"/),
      'commit',
    ]);
    const events = await sql<{
      n: number;
    }>`select count(*)::int as n from packages.outbox where subject = 'events.packages.package.imported'`.execute(h.db);
    expect(events.rows[0]!.n).toBe(1);
  });

  it('re-importing the same 500 packages skips them all with their ids, still in a handful of statements', async () => {
    statements.length = 0;
    const reply = await sut({ packages: Array.from({ length: 500 }, (_, i) => item(`BULK-${i}`)) }, ctx(1));
    expect(reply).toMatchObject({ created: 0, skipped: 500, errors: [] });
    expect(new Set(reply.items.map((i) => i.id)).size).toBe(500);
    // begin, insert (creating nothing), one select of the existing ids, commit.
    expect(statements).toEqual([
      'begin',
      expect.stringMatching(/^insert into/),
      expect.stringMatching(/^select "id", "wr" from "packages"."paque/),
      'commit',
    ]);
    expect(await countPaquetes(1)).toBe(500);
  });

  it('stores money and measures exactly, the state En bodega and the linked user', async () => {
    await sut({ packages: [item('EXACT-1', { codigo_asesor: 'AS-01' }), item('EXACT-2', { codigo_asesor: 'ZZ', volumen: 0.5 })] }, ctx(2));
    const rows = await sql<Record<string, unknown>>`
      select wr, estado, usuario_id, codigo_asesor, peso::text, precio::text, cuenta_a_terceros::text, total::text, volumen::text
      from packages.paquetes where empresa_id = 2 order by wr`.execute(h.db);
    expect(rows.rows).toEqual([
      {
        wr: 'EXACT-1',
        estado: 'En bodega',
        usuario_id: 77,
        codigo_asesor: 'AS-01',
        peso: '2.1250',
        precio: '10.10',
        cuenta_a_terceros: '0.20',
        total: '10.30',
        volumen: null,
      },
      {
        wr: 'EXACT-2',
        estado: 'En bodega',
        usuario_id: null,
        codigo_asesor: 'ZZ',
        peso: '2.1250',
        precio: '10.10',
        cuenta_a_terceros: '0.20',
        total: '10.30',
        volumen: '0.5000',
      },
    ]);
  });

  it('creates each wr once when overlapping batches run concurrently in different orders', async () => {
    const wrs = Array.from({ length: 40 }, (_, i) => `RACE-${i}`);
    const batches = Array.from({ length: 6 }, (_, b) => (b % 2 === 0 ? wrs : [...wrs].reverse()).map((wr) => item(wr)));
    const replies = await Promise.all(batches.map((packages) => sut({ packages }, ctx(3))));
    expect(replies.reduce((n, r) => n + r.created, 0)).toBe(40);
    for (const wr of wrs) {
      const outcomes = replies.flatMap((r) => r.items.filter((i) => i.wr === wr));
      expect(outcomes.filter((o) => o.status === 'created')).toHaveLength(1);
      expect(new Set(outcomes.map((o) => o.id)).size).toBe(1);
    }
    expect(await countPaquetes(3)).toBe(40);
  });

  it('reports an unresolved branch per item and creates the rest', async () => {
    const reply = await sut({ packages: [item('BR-1', { id_sucursal: 9 }), item('BR-2')] }, ctx(4));
    expect(reply).toEqual({
      created: 1,
      skipped: 0,
      errors: [{ index: 0, wr: 'BR-1', message: 'La sucursal no existe o está inactiva' }],
      items: [{ index: 1, wr: 'BR-2', status: 'created', id: expect.any(Number) }],
    });
  });

  it('touches no table when every item is invalid', async () => {
    statements.length = 0;
    const reply = await sut({ packages: [{ wr: 'X' }, 5] }, ctx(5));
    expect(reply).toMatchObject({ created: 0, skipped: 0, items: [] });
    expect(reply.errors.map((e) => e.index)).toEqual([0, 1]);
    expect(statements).toEqual([]);
  });
});
