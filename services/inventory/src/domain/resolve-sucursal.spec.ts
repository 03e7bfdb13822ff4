import { resolveBranch } from './resolve-sucursal';

const branches = [
  { id: 1, nombre: 'Sucursal Centro' },
  { id: 2, nombre: 'Sucursal Norte' },
  { id: 3, nombre: 'sucursal norte ' },
];

describe('resolveBranch', () => {
  it('finds an active branch by id', () => {
    expect(resolveBranch(branches, { id_sucursal: 1 })).toEqual({ ok: true, id_sucursal: 1, nombre: 'Sucursal Centro' });
  });

  it('matches names trimmed and case-insensitively', () => {
    expect(resolveBranch(branches, { sucursal: '  SUCURSAL centro ' })).toEqual({ ok: true, id_sucursal: 1, nombre: 'Sucursal Centro' });
  });

  it('refuses an unknown id or name, and a name shared by two active branches', () => {
    expect(resolveBranch(branches, { id_sucursal: 9 })).toEqual({ ok: false, message: 'La sucursal 9 no existe o está inactiva' });
    expect(resolveBranch(branches, { sucursal: 'Sur' }).ok).toBe(false);
    const ambiguous = resolveBranch(branches, { sucursal: 'Sucursal Norte' });
    expect(ambiguous).toEqual({
      ok: false,
      message: 'El nombre de sucursal "Sucursal Norte" es ambiguo: coincide con 2 sucursales activas',
    });
  });
});
