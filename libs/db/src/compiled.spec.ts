import { filterShape, shapedFilters } from './compiled';

describe('the shape of a filtered statement', () => {
  it('says which filters a request has, not their values', () => {
    const request = { fecha_inicio: '2026-01-01', estado: undefined, page: 2 };
    expect(filterShape(request, ['fecha_inicio', 'fecha_fin', 'estado'])).toEqual({
      fecha_inicio: true,
      fecha_fin: false,
      estado: false,
    });
  });

  it('keeps the values, stand-ins included, of the filters its shape has and only those', () => {
    const standIn = Symbol('argument 1');
    expect(shapedFilters({ fecha_inicio: true, fecha_fin: false }, { fecha_inicio: standIn, fecha_fin: undefined })).toEqual({
      fecha_inicio: standIn,
    });
  });
});
