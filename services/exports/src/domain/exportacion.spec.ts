import { objetoOf, toExportacion, type ExportacionRow } from './exportacion';

describe('export files and answers', () => {
  it('names one object per attempt, in the store of the resource’s owner', () => {
    const sut = objetoOf({ recurso: 'sales', empresa_id: 7, id: 42, intento: 3 });
    expect(sut).toBe('sales/empresa-7.exportacion-42.intento-3.ndjson.gz');
    expect(objetoOf({ recurso: 'sales', empresa_id: 7, id: 42, intento: 4 })).not.toBe(sut);
    expect(objetoOf({ recurso: 'inventory', empresa_id: 7, id: 42, intento: 3 })).toBe(
      'inventory/empresa-7.exportacion-42.intento-3.ndjson.gz',
    );
  });

  const row = (over: Partial<ExportacionRow>): ExportacionRow => ({
    id: 42,
    empresa_id: 7,
    recurso: 'sales',
    filtros: { estado: 'Completada' },
    estado: 'completada',
    intento: 1,
    lease_hasta: null,
    objeto: 'sales/empresa-7.exportacion-42.intento-1.ndjson.gz',
    objetos: 3,
    bytes: '1234',
    cursor: 'WyIxMDAiLDBd',
    error: null,
    created_at: new Date('2026-03-10T12:00:00Z'),
    iniciada: new Date('2026-03-10T12:00:01Z'),
    completada: new Date('2026-03-10T12:00:02Z'),
    expira: new Date('2026-03-17T12:00:02Z'),
    ...over,
  });

  it('offers the download only while a completed export still has its file', () => {
    expect(toExportacion(row({}))).toMatchObject({ descarga: '/exports/42/download', bytes: 1234, objetos: 3 });
    expect(toExportacion(row({ objeto: null })).descarga).toBeNull();
    expect(toExportacion(row({ estado: 'procesando', objeto: null, objetos: null, bytes: null }))).toMatchObject({
      descarga: null,
      bytes: null,
    });
  });
});
