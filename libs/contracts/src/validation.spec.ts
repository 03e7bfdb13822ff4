import { z } from 'zod';
import { SaleCreateBody } from './sales';
import { UNKNOWN_PARAMETER_MESSAGE, detailsFromZod, hasUnknownKeys } from './validation';

describe('detailsFromZod', () => {
  const sut = (value: unknown) => {
    const parsed = SaleCreateBody.safeParse(value);
    if (parsed.success) throw new Error('expected a refusal');
    return { details: detailsFromZod(parsed.error), unknown: hasUnknownKeys(parsed.error) };
  };
  const valid = {
    fecha: '2026-03-10',
    estado: 'Completada',
    id_sucursal: 1,
    id_bodega: 1,
    id_documento: 1,
    id_canal: 1,
    detalles: [{ id_producto: 1, cantidad: 1 }],
  };

  it('names each unknown field of the body by its own path', () => {
    expect(sut({ ...valid, id_clientee: 4, nota: 'x' })).toEqual({
      details: { id_clientee: ['Campo desconocido'], nota: ['Campo desconocido'] },
      unknown: true,
    });
  });

  it('names an unknown field of a line by its path, beside the problems of the line', () => {
    expect(sut({ ...valid, detalles: [{ id_producto: 1, cantida: 2 }] })).toEqual({
      details: { 'detalles.0.cantida': ['Campo desconocido'], 'detalles.0.cantidad': [expect.any(String)] },
      unknown: true,
    });
  });

  it('says nothing of unknown fields when every field is known', () => {
    expect(sut({ ...valid, estado: 'Vendida' })).toEqual({ details: { estado: [expect.any(String)] }, unknown: false });
  });

  it('names a key called __proto__ like any other', () => {
    const parsed = z.strictObject({ page: z.string().optional() }).safeParse(JSON.parse('{"__proto__": "1", "": "2"}'));
    const details = parsed.success ? {} : detailsFromZod(parsed.error, UNKNOWN_PARAMETER_MESSAGE);
    expect(Object.entries(details)).toEqual([
      ['__proto__', ['Parámetro desconocido']],
      ['', ['Parámetro desconocido']],
    ]);
    expect(Object.getPrototypeOf(details)).toBe(Object.prototype);
  });

  it('says what it is told of unknown query parameters', () => {
    const parsed = z.strictObject({ page: z.string().optional() }).safeParse({ perPage: '1' });
    expect(parsed.success || detailsFromZod(parsed.error, UNKNOWN_PARAMETER_MESSAGE)).toEqual({ perPage: ['Parámetro desconocido'] });
  });
});
