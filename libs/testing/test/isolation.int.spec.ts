import pg from 'pg';
import { configuredUrls, isolate, type Isolation } from '../src';

async function query<R extends pg.QueryResultRow>(connectionString: string, text: string, params: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    return (await client.query<R>(text, params)).rows;
  } finally {
    await client.end();
  }
}
const databaseExists = async (name: string) =>
  (await query<{ n: number }>(configuredUrls().databaseUrl, 'select count(*)::int as n from pg_database where datname = $1', [name]))[0]!
    .n === 1;
const databaseOf = (iso: Isolation) => new URL(iso.databaseUrl).pathname.slice(1);

describe('isolating a test file', () => {
  const made: Isolation[] = [];
  const make = async (label?: string) => {
    const iso = await isolate(label);
    made.push(iso);
    return iso;
  };
  afterAll(() => Promise.all(made.map((iso) => iso.drop())));

  it('names the database, the subject prefix and the Redis prefix after the label, with one id of its own', async () => {
    const iso = await make('Ventas-Créditos 2026');
    const id = iso.subjectPrefix.slice('test_'.length);
    expect(id).toMatch(/^ventascrdito_[0-9a-f]{10}$/);
    expect(databaseOf(iso)).toBe(`erp_test_${id}`);
    expect(iso.redisKeyPrefix).toBe(`test:${id}`);
    expect(iso.subjectPrefix).toMatch(/^[A-Za-z0-9_-]+$/);
    expect((await make()).subjectPrefix).toMatch(/^test_t_[0-9a-f]{10}$/);
  });

  it('gives two isolations of one label different databases and prefixes', async () => {
    const [a, b] = await Promise.all([make('sales'), make('sales')]);
    expect(databaseOf(a)).not.toBe(databaseOf(b));
    expect(a.subjectPrefix).not.toBe(b.subjectPrefix);
    expect(a.redisKeyPrefix).not.toBe(b.redisKeyPrefix);
  });

  it('creates an empty database on the configured server, and shares the NATS and Redis URLs', async () => {
    const iso = await make('empty');
    const server = new URL(configuredUrls().databaseUrl);
    expect(new URL(iso.databaseUrl).host).toBe(server.host);
    expect({ natsUrl: iso.natsUrl, redisUrl: iso.redisUrl }).toEqual({
      natsUrl: configuredUrls().natsUrl,
      redisUrl: configuredUrls().redisUrl,
    });
    const tables = await query<{ n: number }>(
      iso.databaseUrl,
      "select count(*)::int as n from pg_tables where schemaname not in ('pg_catalog', 'information_schema')",
    );
    expect(tables[0]!.n).toBe(0);
  });

  it('drops its database even with a connection still open, and a second drop is harmless', async () => {
    const iso = await make('dropped');
    const name = databaseOf(iso);
    expect(await databaseExists(name)).toBe(true);
    const lingering = new pg.Client({ connectionString: iso.databaseUrl });
    lingering.on('error', () => undefined);
    await lingering.connect();
    await iso.drop();
    expect(await databaseExists(name)).toBe(false);
    await expect(iso.drop()).resolves.toBeUndefined();
    await lingering.end().catch(() => undefined);
  });
});
