import { PackagesImportBody } from '@erp/contracts';
import { sucursalQuery, buildReply, splitRepeats, validateItems, wrOf, type ValidItem } from './import-batch';

const item = (over: Record<string, unknown> = {}) => ({
  cliente: 'Juan Pérez',
  codigo_asesor: 'AS-01',
  wr: 'WR-1',
  guia: 'G-1',
  embalaje: 'Caja',
  piezas: 2,
  peso: 10.5,
  precio: 25,
  cuenta_a_terceros: 0,
  otros: 1.25,
  total: 26.25,
  id_sucursal: 7,
  ...over,
});

const without = (key: string) => {
  const copy: Record<string, unknown> = item();
  delete copy[key];
  return copy;
};

describe('validateItems', () => {
  it('accepts a complete item and trims its text, but keeps codigo_asesor as sent', () => {
    const sut = validateItems([item({ cliente: '  Ana ', wr: ' WR-9 ', codigo_asesor: ' as-01 ' })]);
    expect(sut.errors).toEqual([]);
    expect(sut.valid).toHaveLength(1);
    expect(sut.valid[0]!.item).toMatchObject({
      cliente: 'Ana',
      wr: 'WR-9',
      codigo_asesor: ' as-01 ',
      transportista: null,
      volumen: null,
      nota: null,
    });
  });

  it.each(['cliente', 'codigo_asesor', 'wr', 'guia', 'embalaje', 'piezas', 'peso', 'precio', 'cuenta_a_terceros', 'otros', 'total'])(
    'refuses an item without %s, naming the field in Spanish',
    (field) => {
      const sut = validateItems([without(field)]);
      expect(sut.valid).toEqual([]);
      expect(sut.errors).toEqual([{ index: 0, wr: field === 'wr' ? '' : 'WR-1', message: `${field}: Es obligatorio` }]);
    },
  );

  it('requires id_sucursal or sucursal and accepts either', () => {
    const noBranch = without('id_sucursal');
    const sut = validateItems([noBranch, { ...noBranch, sucursal: 'Centro' }, { ...noBranch, id_sucursal: null, sucursal: 'Centro' }]);
    expect(sut.errors).toEqual([{ index: 0, wr: 'WR-1', message: 'Debe indicar id_sucursal o sucursal' }]);
    expect(sut.valid.map((v) => v.index)).toEqual([1, 2]);
  });

  it('lists every problem of an item in one message', () => {
    const sut = validateItems([{ ...without('id_sucursal'), cliente: '', peso: -1, piezas: 1.5 }]);
    expect(sut.errors[0]!.message).toBe(
      'cliente: Es obligatorio; piezas: Debe ser un número entero; peso: Debe ser mayor o igual a 0; Debe indicar id_sucursal o sucursal',
    );
  });

  it.each([
    ['a price sent as text', { precio: '25' }, 'precio: Debe ser un número'],
    ['a negative total', { total: -0.01 }, 'total: Debe ser mayor o igual a 0'],
    ['negative pieces', { piezas: -1 }, 'piezas: Debe ser mayor o igual a 0'],
    ['an amount beyond its column', { otros: 1e13 }, 'otros: Debe ser menor o igual a 999999999999'],
    ['a negative volume', { volumen: -2 }, 'volumen: Debe ser mayor o igual a 0'],
    ['a branch id of 0', { id_sucursal: 0 }, 'id_sucursal: Debe ser mayor que 0'],
    ['a numeric wr', { wr: 123 }, 'wr: Debe ser texto'],
    ['a guide of 256 characters', { guia: 'x'.repeat(256) }, 'guia: Debe tener como máximo 255 caracteres'],
  ])('refuses %s', (_label, over, message) => {
    expect(validateItems([item(over)]).errors).toEqual([{ index: 0, wr: expect.any(String), message }]);
  });

  it('refuses items that are not objects and keeps validating the rest', () => {
    const sut = validateItems([null, 'WR-1', [], item({ wr: 'WR-2' })]);
    expect(sut.errors.map((e) => [e.index, e.message])).toEqual([
      [0, 'El paquete debe ser un objeto JSON'],
      [1, 'El paquete debe ser un objeto JSON'],
      [2, 'El paquete debe ser un objeto JSON'],
    ]);
    expect(sut.valid.map((v) => v.index)).toEqual([3]);
  });

  it('accepts zero amounts and pieces', () => {
    expect(validateItems([item({ piezas: 0, peso: 0, precio: 0, cuenta_a_terceros: 0, otros: 0, total: 0 })]).errors).toEqual([]);
  });
});

describe('wrOf', () => {
  it('reports the wr sent, trimmed, or an empty string', () => {
    expect(wrOf({ wr: ' A1 ' })).toBe('A1');
    expect(wrOf({ wr: 42 })).toBe('42');
    expect(wrOf({ wr: {} })).toBe('');
    expect(wrOf(null)).toBe('');
  });
});

describe('sucursalQuery', () => {
  it('asks by id when both are sent, else by name', () => {
    const [byId, byName] = validateItems([item({ sucursal: 'Centro' }), item({ id_sucursal: undefined, sucursal: ' Centro ' })]).valid;
    expect(sucursalQuery(byId!.item)).toEqual({ id_sucursal: 7 });
    expect(sucursalQuery(byName!.item)).toEqual({ sucursal: 'Centro' });
  });
});

describe('splitRepeats and buildReply', () => {
  const valid = (wrs: string[]): ValidItem[] => validateItems(wrs.map((wr) => item({ wr }))).valid;

  it('keeps the first item of each wr and skips the rest with the first one’s id', () => {
    const { firsts, repeats } = splitRepeats(valid(['A', 'B', 'A', 'A']));
    expect(firsts.map((f) => f.index)).toEqual([0, 1]);
    expect(repeats.map((r) => r.index)).toEqual([2, 3]);
    const sut = buildReply({ firsts, repeats, errors: [], created: new Map([['A', 10]]), existing: new Map([['B', 3]]) });
    expect(sut).toEqual({
      created: 1,
      skipped: 3,
      errors: [],
      items: [
        { index: 0, wr: 'A', status: 'created', id: 10 },
        { index: 1, wr: 'B', status: 'skipped', id: 3 },
        { index: 2, wr: 'A', status: 'skipped', id: 10 },
        { index: 3, wr: 'A', status: 'skipped', id: 10 },
      ],
    });
  });

  it('orders errors by index', () => {
    const sut = buildReply({
      firsts: [],
      repeats: [],
      errors: [
        { index: 4, wr: 'x', message: 'm' },
        { index: 1, wr: 'y', message: 'm' },
      ],
      created: new Map(),
      existing: new Map(),
    });
    expect(sut.errors.map((e) => e.index)).toEqual([1, 4]);
    expect(sut).toMatchObject({ created: 0, skipped: 0, items: [] });
  });
});

describe('PackagesImportBody', () => {
  it.each([
    [{}, 'packages', 'Es obligatorio'],
    [{ packages: {} }, 'packages', 'Debe ser una lista de paquetes'],
    [{ packages: [] }, 'packages', 'Debe incluir al menos 1 paquete'],
    [{ packages: Array.from({ length: 501 }, () => ({})) }, 'packages', 'Debe incluir como máximo 500 paquetes'],
    [[], '_', 'El cuerpo debe ser un objeto JSON con la lista "packages"'],
  ])('refuses %#: %s → %s', (body, path, message) => {
    const parsed = PackagesImportBody.safeParse(body);
    expect(parsed.success).toBe(false);
    const issue = parsed.error!.issues[0]!;
    expect(issue.path.length > 0 ? issue.path.join('.') : '_').toBe(path);
    expect(issue.message).toBe(message);
  });

  it('accepts 1 to 500 items of any shape: items are validated one by one later', () => {
    expect(PackagesImportBody.safeParse({ packages: [1] }).success).toBe(true);
    expect(PackagesImportBody.safeParse({ packages: Array.from({ length: 500 }, () => null) }).success).toBe(true);
  });
});
