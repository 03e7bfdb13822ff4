import pg from 'pg';
import { SERVICES, schemaOf } from '@erp/contracts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Row = Record<string, any>;
export type Query = (text: string, params?: unknown[]) => Promise<Row[]>;

/** Where the schemas live: one database for all, or some moved to databases of their own. */
export interface DatabaseUrls {
  /** The database of every schema not named in `apart`. */
  databaseUrl: string;
  /** The database of each schema (by name: `sales`, `webhook_ingest`…) that lives elsewhere. */
  databaseUrls?: Readonly<Partial<Record<string, string>>>;
}

const SCHEMAS = SERVICES.map(schemaOf);
const SCHEMA_NAMED = new RegExp(`\\b(${SCHEMAS.join('|')})\\.[a-z_]+`, 'g');

/** The distinct databases the schemas live in. */
export function databasesOf(urls: DatabaseUrls): string[] {
  return [...new Set(SCHEMAS.map((schema) => urls.databaseUrls?.[schema] ?? urls.databaseUrl))];
}

/**
 * One connection per database the schemas live in: `q` runs a statement on the database of the
 * schemas it names (a statement naming schemas of two databases cannot run, and is refused),
 * `each` reaches every database (for what each one holds, such as its outboxes). With
 * `snapshot`, each connection reads in one read-only repeatable-read transaction.
 */
export class SchemaClients {
  private readonly clients = new Map<string, pg.Client>();
  private constructor(
    private readonly urls: DatabaseUrls,
    private readonly snapshot: boolean,
  ) {}

  static async connect(urls: DatabaseUrls, options: { snapshot?: boolean } = {}): Promise<SchemaClients> {
    const clients = new SchemaClients(urls, options.snapshot ?? false);
    try {
      for (const url of databasesOf(urls)) {
        const client = new pg.Client({
          connectionString: url,
          ...(clients.snapshot ? { options: '-c default_transaction_read_only=on' } : {}),
        });
        clients.clients.set(url, client);
        await client.connect();
        if (clients.snapshot) await client.query('begin isolation level repeatable read read only');
      }
      return clients;
    } catch (err) {
      await clients.end();
      throw err;
    }
  }

  readonly q: Query = async (text, params = []) => {
    const urls = new Set([...text.matchAll(SCHEMA_NAMED)].map((m) => this.urls.databaseUrls?.[m[1]!] ?? this.urls.databaseUrl));
    if (urls.size !== 1) throw new Error(`a statement must name the schemas of one database: ${text.slice(0, 80)}`);
    return this.run(this.clients.get([...urls][0]!)!, text, params);
  };

  /** A query function per database. */
  get each(): Query[] {
    return [...this.clients.values()].map(
      (client) =>
        (text: string, params: unknown[] = []) =>
          this.run(client, text, params),
    );
  }

  private async run(client: pg.Client, text: string, params: unknown[]): Promise<Row[]> {
    try {
      return (await client.query<Row>(text, params)).rows;
    } catch (err) {
      // A failed statement aborts its transaction: a new snapshot for the next statement.
      if (this.snapshot) {
        await client.query('rollback');
        await client.query('begin isolation level repeatable read read only');
      }
      throw err;
    }
  }

  async end(): Promise<void> {
    await Promise.all([...this.clients.values()].map((client) => client.end().catch(() => undefined)));
  }
}
