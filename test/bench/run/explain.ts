import { Kysely, PostgresDialect, type CompiledQuery } from 'kysely';
import { createPool } from '@erp/db';
import type { InventoryDb } from '../../../services/inventory/src/db/tables';
import type { ReturnsDb } from '../../../services/returns/src/db/tables';
import type { SalesDb } from '../../../services/sales/src/db/tables';
import { directQueries, runDirect } from './direct-queries';
import type { Scenario } from './scenarios';

export interface Explained {
  scenario: string;
  path: string;
  statements: Array<{ sql: string; parameters: readonly unknown[]; plan: string }>;
}

/**
 * `EXPLAIN (ANALYZE, BUFFERS)` of every statement one request of each read scenario runs: the
 * request is served once by the services' repository functions (as the baseline does) while
 * the compiled statements are recorded, then each is explained with its own parameters.
 */
export async function explainScenarios(databaseUrl: string, empresaId: number, list: readonly Scenario[]): Promise<Explained[]> {
  const pool = createPool({ connectionString: databaseUrl, max: 4, applicationName: 'bench-explain', statementTimeoutMs: 120_000 });
  let recorded: CompiledQuery[] = [];
  const log = (event: { level: string; query: CompiledQuery }) => {
    if (event.level === 'query') recorded.push(event.query);
  };
  const inventory = new Kysely<InventoryDb>({ dialect: new PostgresDialect({ pool }), log }).withSchema('inventory');
  const sales = new Kysely<SalesDb>({ dialect: new PostgresDialect({ pool }), log }).withSchema('sales');
  const returns = new Kysely<ReturnsDb>({ dialect: new PostgresDialect({ pool }), log }).withSchema('returns');
  const routes = directQueries({ inventory, sales, returns }, empresaId);
  const out: Explained[] = [];
  try {
    for (const s of list) {
      if (!s.baseline) continue;
      const { method, path } = s.next();
      if (method !== 'GET') continue;
      recorded = [];
      await runDirect(routes, path);
      const statements: Explained['statements'] = [];
      for (const q of recorded) {
        const { rows } = await pool.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${q.sql}`, [...q.parameters]);
        statements.push({ sql: q.sql, parameters: q.parameters, plan: rows.map((r) => r['QUERY PLAN']).join('\n') });
      }
      out.push({ scenario: s.name, path, statements });
    }
  } finally {
    await pool.end();
  }
  return out;
}
