import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql, type Expression } from 'kysely';
import { jsonDecimal, jsonObject, jsonTimestamp } from './json';

const db = new Kysely<{ t: { nombre: string; total: string; creado: Date } }>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (k) => new PostgresIntrospector(k),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});
const compiled = (value: Expression<unknown>) =>
  db
    .selectFrom('t')
    .select(sql`${value}`.as('json'))
    .compile();

describe('jsonObject', () => {
  it('reads a string as the column it names, never as a text value', () => {
    const byName = compiled(jsonObject({ nombre: 't.nombre', total: jsonDecimal('t.total'), creado: jsonTimestamp('t.creado') }));
    const byRef = compiled(
      jsonObject({ nombre: sql.ref('t.nombre'), total: jsonDecimal(sql.ref('t.total')), creado: jsonTimestamp(sql.ref('t.creado')) }),
    );
    expect(byName.sql).toBe(byRef.sql);
    expect(byName.parameters).toEqual([]);
  });
});
