import { generateBenchData } from './data/generate';
import { benchDatabaseUrl, benchDatabaseUrls, parseScale } from './data/plan';
import { terminalProgress } from './data/progress';

/**
 * `npm run bench:data -- --sales 1000000`: (re)creates the benchmark database and loads it.
 * Options: --sales, --products, --warehouses, --returns, --packages, --seed (see data/plan.ts).
 * BENCH_DATABASE_URL (default erp_bench on the local server); BENCH_DATABASE_URL_<SCHEMA> puts
 * that schema in another database, e.g. on a second server (each is dropped and created again).
 */

async function main(): Promise<void> {
  const { scale, seed, rest } = parseScale(process.argv.slice(2));
  if (Object.keys(rest).length > 0) throw new Error(`unknown option --${Object.keys(rest)[0]}`);
  const databaseUrl = benchDatabaseUrl();
  const databaseUrls = benchDatabaseUrls();
  const progress = terminalProgress();
  progress.log(`bench data → ${new URL(databaseUrl).pathname.slice(1)}: ${JSON.stringify(scale)}, seed ${seed}`);
  for (const [schema, url] of Object.entries(databaseUrls)) progress.log(`  ${schema} → ${new URL(url).host}${new URL(url).pathname}`);
  const result = await generateBenchData({ databaseUrl, databaseUrls, scale, seed, recreate: true, progress });
  progress.log('');
  for (const [table, rows] of Object.entries(result.counts))
    progress.log(`${table.padEnd(28)} ${rows.toLocaleString('en-US').padStart(12)}`);
  for (const { schema, reason } of result.skipped) progress.log(`${schema.padEnd(28)} not loaded: ${reason}`);
  progress.log(`\nloaded in ${result.seconds.toFixed(1)} s; API keys:`);
  for (const c of result.companies) progress.log(`  ${c.clave.padEnd(14)} empresa ${c.empresaId}  ${c.apiKey}`);
}

main().catch((err: unknown) => {
  console.error(`bench:data failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exit(1);
});
