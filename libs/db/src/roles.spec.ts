import { databaseKey, schemasOnServer } from './roles';

describe('schemasOnServer', () => {
  const env = {
    DATABASE_URL: 'postgres://auditor@postgres:5432/erp',
    DATABASE_URL_SALES: 'postgres://auditor@Postgres-Sales/erp',
  };

  it('keeps the schemas whose database is the server’s, whoever connects', () => {
    const schemas = ['gateway', 'sales', 'inventory'];
    expect(schemasOnServer(schemas, 'postgres://postgres@postgres/erp', env)).toEqual(['gateway', 'inventory']);
    expect(schemasOnServer(schemas, 'postgres://postgres-sales:5432/erp', env)).toEqual(['sales']);
  });

  it('tells another database of the same server, or another port, apart', () => {
    expect(schemasOnServer(['gateway'], 'postgres://postgres/erp_restored', env)).toEqual([]);
    expect(schemasOnServer(['gateway'], 'postgres://postgres:5433/erp', env)).toEqual([]);
  });

  it('refuses to guess where a schema lives', () => {
    expect(() => schemasOnServer(['gateway'], 'postgres://postgres/erp', {})).toThrow(/DATABASE_URL/);
  });

  it('reads a host and port given as parameters', () => {
    expect(databaseKey('postgres:///erp?host=/var/run/postgresql&port=5433')).toBe('/var/run/postgresql:5433/erp');
    expect(databaseKey('postgres://[::1]/erp')).toBe('::1:5432/erp');
  });
});
