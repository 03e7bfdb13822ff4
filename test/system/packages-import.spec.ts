import pg from 'pg';
import type { SeedOutput } from '@erp/back-office';
import { KEY_A, KEY_B, Stack, json } from '../support/stack';

const PATH = '/api/external/v1/packages/import';

/** Two companies with overlapping branch names and advisor codes, so isolation is visible. */
function fixture(): unknown {
  return {
    empresas: [
      {
        ref: 'a',
        nombre: 'Empresa A',
        usuarios: [
          { ref: 'admin', nombre: 'Admin A', rol: 'Administrador' },
          { ref: 'asesor', nombre: 'Asesora Uno', rol: 'Vendedor', codigo: 'AS-01' },
          { ref: 'retirado', nombre: 'Asesor Retirado', rol: 'Vendedor', codigo: 'AS-02', activo: false },
        ],
        api_keys: [{ ref: 'main', usuario: 'admin', key: KEY_A }],
        sucursales: [
          { ref: 'centro', nombre: 'Sucursal Centro' },
          { ref: 'norte', nombre: 'Sucursal Norte' },
          { ref: 'cerrada', nombre: 'Sucursal Cerrada', activo: false },
          { ref: 'doble1', nombre: 'Sucursal Doble' },
          { ref: 'doble2', nombre: 'sucursal doble' },
        ],
      },
      {
        ref: 'b',
        nombre: 'Empresa B',
        usuarios: [
          { ref: 'admin', nombre: 'Admin B', rol: 'Administrador' },
          { ref: 'asesor', nombre: 'Asesor de B', rol: 'Vendedor', codigo: 'AS-01' },
        ],
        api_keys: [{ ref: 'main', usuario: 'admin', key: KEY_B }],
        sucursales: [{ ref: 'centro', nombre: 'Sucursal Centro' }],
      },
    ],
  };
}

describe('POST /packages/import through gateway, NATS and the packages service', () => {
  let stack: Stack;
  let seeded: SeedOutput;
  let db: pg.Client;

  beforeAll(async () => {
    stack = await Stack.start({ services: ['gateway', 'inventory', 'packages'] });
    seeded = await stack.seed(fixture());
    db = new pg.Client({ connectionString: stack.iso.databaseUrl });
    await db.connect();
  });
  afterAll(async () => {
    await db.end();
    await stack.stop();
  });

  const ref = (empresa: 'a' | 'b', kind: string, name: string) => (seeded.empresas[empresa]![kind] as Record<string, number>)[name]!;
  const empresaId = (empresa: 'a' | 'b') => seeded.empresas[empresa]!.id;

  const item = (wr: string, over: Record<string, unknown> = {}) => ({
    cliente: 'Juan Pérez',
    codigo_asesor: 'AS-01',
    wr,
    guia: `GU-${wr}`,
    embalaje: 'Caja',
    piezas: 3,
    peso: 12.5,
    precio: 40,
    cuenta_a_terceros: 5.25,
    otros: 1.1,
    total: 46.35,
    id_sucursal: ref('a', 'sucursales', 'centro'),
    ...over,
  });

  const post = (body: unknown, key = KEY_A) =>
    stack.api(PATH, {
      key,
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  const stored = async (empresa: 'a' | 'b', wr: string) =>
    (
      await db.query(
        `select id, empresa_id, sucursal_id, usuario_id, codigo_asesor, cliente, wr, guia, embalaje, piezas, estado,
                peso::text, precio::text, cuenta_a_terceros::text, otros::text, total::text, volumen::text, transportista, nota
         from packages.paquetes where empresa_id = $1 and wr = $2`,
        [empresaId(empresa), wr],
      )
    ).rows;

  const totalStored = async () => Number((await db.query('select count(*)::int as n from packages.paquetes')).rows[0].n);

  it('creates valid items in state "En bodega" and answers 200 with the import body and the rate-limit headers', async () => {
    const res = await post({
      packages: [
        item('WR-OK-1', { transportista: 'DHL', volumen: 0.75, nota: 'Frágil' }),
        item('WR-OK-2', { id_sucursal: undefined, sucursal: 'Sucursal Norte' }),
      ],
    });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(Object.keys(body).sort()).toEqual(['created', 'errors', 'items', 'skipped', 'success']);
    expect(body).toEqual({
      success: true,
      created: 2,
      skipped: 0,
      errors: [],
      items: [
        { index: 0, wr: 'WR-OK-1', status: 'created', id: expect.any(Number) },
        { index: 1, wr: 'WR-OK-2', status: 'created', id: expect.any(Number) },
      ],
    });
    expect(res.headers.get('x-ratelimit-limit')).toBe('1000');
    expect(Number(res.headers.get('x-ratelimit-remaining'))).toBeGreaterThan(0);
    expect(res.headers.get('x-ratelimit-reset')).toMatch(/^\d+$/);

    const [first] = await stored('a', 'WR-OK-1');
    expect(first).toEqual({
      id: body.items[0].id,
      empresa_id: empresaId('a'),
      sucursal_id: ref('a', 'sucursales', 'centro'),
      usuario_id: ref('a', 'usuarios', 'asesor'),
      codigo_asesor: 'AS-01',
      cliente: 'Juan Pérez',
      wr: 'WR-OK-1',
      guia: 'GU-WR-OK-1',
      embalaje: 'Caja',
      piezas: 3,
      estado: 'En bodega',
      peso: '12.5000',
      precio: '40.00',
      cuenta_a_terceros: '5.25',
      otros: '1.10',
      total: '46.35',
      volumen: '0.7500',
      transportista: 'DHL',
      nota: 'Frágil',
    });
    expect((await stored('a', 'WR-OK-2'))[0]).toMatchObject({
      sucursal_id: ref('a', 'sucursales', 'norte'),
      volumen: null,
      transportista: null,
    });
  });

  describe('answers 400 with details and stores nothing when the body is not {packages: [1..500 items]}', () => {
    it.each([
      ['packages is missing', {}, 'packages'],
      ['packages is not an array', { packages: { wr: 'WR-400' } }, 'packages'],
      ['packages is a string', { packages: 'WR-400' }, 'packages'],
      ['packages is empty', { packages: [] }, 'packages'],
      ['packages has 501 items', { packages: Array.from({ length: 501 }, (_, i) => ({ wr: `WR-501-${i}` })) }, 'packages'],
      ['the body is an array', [{ wr: 'WR-400' }], '_'],
      ['the body is not JSON', '{"packages": [{"wr": "WR-400"', '_'],
    ])('when %s', async (_case, body, field) => {
      const before = await totalStored();
      const res = await post(body);
      expect(res.status).toBe(400);
      const payload = await json(res);
      expect(payload).toMatchObject({ success: false, code: 400, error: expect.any(String) });
      expect(Object.keys(payload.details)).toEqual([field]);
      expect(payload.details[field][0]).toEqual(expect.any(String));
      expect(res.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
      expect(await totalStored()).toBe(before);
    });

    it('says which limit 501 valid items break, and stores none of them', async () => {
      const res = await post({ packages: Array.from({ length: 501 }, (_, i) => item(`WR-MAX-${i}`)) });
      expect(res.status).toBe(400);
      expect((await json(res)).details).toEqual({ packages: ['Debe incluir como máximo 500 paquetes'] });
      expect((await db.query(`select count(*)::int as n from packages.paquetes where wr like 'WR-MAX-%'`)).rows[0].n).toBe(0);
    });
  });

  it('refuses an unknown field beside packages with 400 campo_desconocido, and stores nothing', async () => {
    const res = await post({ packages: [item('WR-EXTRA-0')], dry_run: true });
    expect(res.status).toBe(400);
    expect(await json(res)).toEqual({
      success: false,
      error: 'Datos inválidos',
      code: 400,
      reason: 'campo_desconocido',
      details: { dry_run: ['Campo desconocido'] },
    });
    expect(await stored('a', 'WR-EXTRA-0')).toEqual([]);
  });

  it('reports an item with an unknown field among the errors, naming the field, and creates the others', async () => {
    const res = await post({ packages: [item('WR-EXTRA-1', { colour: 'rojo' }), item('WR-EXTRA-2')] });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body.errors).toEqual([{ index: 0, wr: 'WR-EXTRA-1', message: 'colour: Campo desconocido' }]);
    expect(body.items).toEqual([{ index: 1, wr: 'WR-EXTRA-2', status: 'created', id: expect.any(Number) }]);
    expect(await stored('a', 'WR-EXTRA-1')).toEqual([]);
  });

  it('answers 401 without a key and stores nothing', async () => {
    const res = await stack.api(PATH, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ packages: [item('WR-401')] }),
    });
    expect(res.status).toBe(401);
    expect(await stored('a', 'WR-401')).toEqual([]);
  });

  it('reports each invalid item with its index, wr and a Spanish message, and still creates the valid ones', async () => {
    const missingCliente: Record<string, unknown> = item('WR-E-0');
    delete missingCliente.cliente;
    const res = await post({
      packages: [
        missingCliente,
        item('WR-E-1', { peso: -1, piezas: 2.5 }),
        item('WR-E-2', { id_sucursal: 999999 }),
        item('WR-E-3', { id_sucursal: undefined, sucursal: 'Sucursal Cerrada' }),
        item('WR-E-4', { id_sucursal: undefined, sucursal: 'Sucursal Doble' }),
        item('WR-E-5', { id_sucursal: undefined }),
        item('WR-E-6', { id_sucursal: undefined, sucursal: '  sucursal NORTE ' }),
        'no soy un paquete',
        item('WR-E-8'),
      ],
    });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body.errors).toEqual([
      { index: 0, wr: 'WR-E-0', message: 'cliente: Es obligatorio' },
      { index: 1, wr: 'WR-E-1', message: 'piezas: Debe ser un número entero; peso: Debe ser mayor o igual a 0' },
      { index: 2, wr: 'WR-E-2', message: 'La sucursal 999999 no existe o está inactiva' },
      { index: 3, wr: 'WR-E-3', message: 'La sucursal "Sucursal Cerrada" no existe o está inactiva' },
      { index: 4, wr: 'WR-E-4', message: 'El nombre de sucursal "Sucursal Doble" es ambiguo: coincide con 2 sucursales activas' },
      { index: 5, wr: 'WR-E-5', message: 'Debe indicar id_sucursal o sucursal' },
      { index: 7, wr: '', message: 'El paquete debe ser un objeto JSON' },
    ]);
    expect(body).toMatchObject({ success: true, created: 2, skipped: 0 });
    expect(body.items.map((i: { index: number; status: string }) => [i.index, i.status])).toEqual([
      [6, 'created'],
      [8, 'created'],
    ]);
    expect((await stored('a', 'WR-E-6'))[0]).toMatchObject({ sucursal_id: ref('a', 'sucursales', 'norte') });
    const refused = await db.query(`select count(*)::int as n from packages.paquetes where wr = any($1)`, [
      ['WR-E-0', 'WR-E-1', 'WR-E-2', 'WR-E-3', 'WR-E-4', 'WR-E-5'],
    ]);
    expect(refused.rows[0].n).toBe(0);
  });

  it('creates the first item of a wr repeated in one batch and skips the rest with the same id', async () => {
    const res = await post({
      packages: [item('WR-TWICE', { cliente: 'Primero' }), item('WR-OTHER'), item('WR-TWICE', { cliente: 'Segundo' }), item('WR-TWICE')],
    });
    const body = await json(res);
    expect(body).toMatchObject({ created: 2, skipped: 2, errors: [] });
    const [twice] = await stored('a', 'WR-TWICE');
    expect(twice.cliente).toBe('Primero');
    expect(body.items).toEqual([
      { index: 0, wr: 'WR-TWICE', status: 'created', id: twice.id },
      { index: 1, wr: 'WR-OTHER', status: 'created', id: expect.any(Number) },
      { index: 2, wr: 'WR-TWICE', status: 'skipped', id: twice.id },
      { index: 3, wr: 'WR-TWICE', status: 'skipped', id: twice.id },
    ]);
  });

  it('skips a wr the company already has, answering the existing id and leaving the package unchanged', async () => {
    const first = await json(await post({ packages: [item('WR-AGAIN', { cliente: 'Original' })] }));
    const again = await json(await post({ packages: [item('WR-AGAIN', { cliente: 'Cambiado' }), item('WR-AGAIN-NEW')] }));
    expect(again).toMatchObject({ created: 1, skipped: 1 });
    expect(again.items[0]).toEqual({ index: 0, wr: 'WR-AGAIN', status: 'skipped', id: first.items[0].id });
    expect((await stored('a', 'WR-AGAIN'))[0].cliente).toBe('Original');
  });

  it('imports 500 packages in one request', async () => {
    const packages = Array.from({ length: 500 }, (_, i) =>
      item(`WR-BULK-${String(i).padStart(3, '0')}`, { codigo_asesor: i % 2 ? 'AS-01' : `EXT-${i}` }),
    );
    const started = performance.now();
    const res = await post({ packages });
    const ms = performance.now() - started;
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body).toMatchObject({ success: true, created: 500, skipped: 0, errors: [] });
    expect(body.items.map((i: { index: number }) => i.index)).toEqual(packages.map((_, i) => i));
    expect(new Set(body.items.map((i: { id: number }) => i.id)).size).toBe(500);
    expect((await db.query(`select count(*)::int as n from packages.paquetes where wr like 'WR-BULK-%'`)).rows[0].n).toBe(500);
    // A few round trips whatever the size: far below a second even on a slow machine.
    expect(ms).toBeLessThan(3_000);
  });

  it('creates a wr exactly once when 5 imports of it run at the same time', async () => {
    const batch = { packages: [item('WR-RACE'), item('WR-RACE-2'), item('WR-RACE-3')] };
    const responses = await Promise.all(Array.from({ length: 5 }, () => post(batch)));
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    const bodies = await Promise.all(responses.map(json));
    for (const wr of ['WR-RACE', 'WR-RACE-2', 'WR-RACE-3']) {
      const outcomes = bodies.flatMap((b) => b.items.filter((i: { wr: string }) => i.wr === wr));
      expect(outcomes.filter((o: { status: string }) => o.status === 'created')).toHaveLength(1);
      const rows = await stored('a', wr);
      expect(rows).toHaveLength(1);
      expect(outcomes.map((o: { id: number }) => o.id)).toEqual(Array(5).fill(rows[0].id));
    }
    expect(bodies.reduce((n, b) => n + b.created, 0)).toBe(3);
  });

  describe('tenant isolation', () => {
    it('keeps the same wr of two companies as two packages', async () => {
      const a = await json(await post({ packages: [item('WR-SHARED')] }, KEY_A));
      const b = await json(await post({ packages: [item('WR-SHARED', { id_sucursal: ref('b', 'sucursales', 'centro') })] }, KEY_B));
      expect(a.items[0].status).toBe('created');
      expect(b.items[0].status).toBe('created');
      expect(b.items[0].id).not.toBe(a.items[0].id);
      expect((await stored('b', 'WR-SHARED'))[0]).toMatchObject({ empresa_id: empresaId('b'), usuario_id: ref('b', 'usuarios', 'asesor') });
    });

    it('refuses a branch of the other company as if it did not exist', async () => {
      const otherBranch = ref('b', 'sucursales', 'centro');
      const body = await json(await post({ packages: [item('WR-FOREIGN', { id_sucursal: otherBranch })] }, KEY_A));
      expect(body).toMatchObject({ created: 0, skipped: 0, items: [] });
      expect(body.errors).toEqual([{ index: 0, wr: 'WR-FOREIGN', message: `La sucursal ${otherBranch} no existe o está inactiva` }]);
      expect(await stored('a', 'WR-FOREIGN')).toEqual([]);
    });

    it('resolves a branch name among the key company’s branches only', async () => {
      const body = await json(
        await post({ packages: [item('WR-BY-NAME', { id_sucursal: undefined, sucursal: 'sucursal centro' })] }, KEY_B),
      );
      expect(body.created).toBe(1);
      expect((await stored('b', 'WR-BY-NAME'))[0].sucursal_id).toBe(ref('b', 'sucursales', 'centro'));
    });
  });

  describe('codigo_asesor', () => {
    it('links the company’s user with that code, trimmed and case-insensitive, and stores the code as sent', async () => {
      await post({ packages: [item('WR-ASESOR-1', { codigo_asesor: ' as-01 ' }), item('WR-ASESOR-2', { codigo_asesor: 'AS-02' })] });
      expect((await stored('a', 'WR-ASESOR-1'))[0]).toMatchObject({ codigo_asesor: ' as-01 ', usuario_id: ref('a', 'usuarios', 'asesor') });
      expect((await stored('a', 'WR-ASESOR-2'))[0]).toMatchObject({ codigo_asesor: 'AS-02', usuario_id: ref('a', 'usuarios', 'retirado') });
    });

    it('stores an unknown code without a user, never linking another company’s user', async () => {
      await post({ packages: [item('WR-ASESOR-3', { codigo_asesor: 'NADIE-99' })] });
      expect((await stored('a', 'WR-ASESOR-3'))[0]).toMatchObject({ codigo_asesor: 'NADIE-99', usuario_id: null });
      const linkedToB = await db.query('select count(*)::int as n from packages.paquetes where empresa_id = $1 and usuario_id = $2', [
        empresaId('a'),
        ref('b', 'usuarios', 'asesor'),
      ]);
      expect(linkedToB.rows[0].n).toBe(0);
    });
  });
});
