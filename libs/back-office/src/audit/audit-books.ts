import { SchemaClients, databasesOf } from '../schema-clients';
import type { AuditOptions, Check, InvariantResult, Settings } from './check';
import {
  knownOrigins,
  reservationsSettled,
  returnMovements,
  saleMovements,
  stockMatchesLedger,
  stockNotBelowZero,
} from './inventory.checks';
import { outboxesPublished } from './outbox.checks';
import { returnCorrelatives, returnsWithinSales } from './returns.checks';
import { exactMoney, oneSalePerReference, returnsCountedBySales, saleCorrelatives } from './sales.checks';
import { inboxProcessed } from './webhooks.checks';

/**
 * The books' invariants (DESIGN §3), in the order they are reported: what the guarantees promise
 * the databases hold after any fault. Each query reads one schema; what spans services is compared
 * by the checks, as the services themselves only meet over NATS.
 */
const CHECKS: Check[] = [
  oneSalePerReference,
  saleCorrelatives,
  returnCorrelatives,
  stockMatchesLedger,
  saleMovements,
  returnMovements,
  returnsWithinSales,
  returnsCountedBySales,
  knownOrigins,
  reservationsSettled,
  inboxProcessed,
  outboxesPublished,
  exactMoney,
  stockNotBelowZero,
];

async function runChecks(checks: Check[], options: AuditOptions, settings: Omit<Settings, 'databases'>): Promise<InvariantResult[]> {
  const snapshots = await SchemaClients.connect(options, { snapshot: true });
  try {
    const q = snapshots.q;
    const empresas = (
      await q('select id, vender_sin_stock from gateway.empresas where ($1::int is null or id = $1) order by id', [
        options.empresaId ?? null,
      ])
    ).map((r) => ({ id: Number(r.id), venderSinStock: Boolean(r.vender_sin_stock) }));
    if (options.empresaId !== undefined && empresas.length === 0) throw new Error(`No existe la empresa ${options.empresaId}`);
    const results: InvariantResult[] = [];
    for (const check of checks) {
      const result: InvariantResult = { name: check.name, checked: 0, violations: [] };
      const started = performance.now();
      for (const empresa of check.global ? [empresas[0] ?? { id: 0, venderSinStock: true }] : empresas) {
        try {
          const { checked, violations } = await check.run(q, empresa, { ...settings, databases: snapshots.each });
          result.checked += checked;
          for (const violation of violations) result.violations.push(violation);
        } catch (err) {
          result.violations.push(`check failed to run${check.global ? '' : ` for empresa ${empresa.id}`}: ${(err as Error).message}`);
        }
      }
      results.push({ ...result, ms: Math.round(performance.now() - started) });
    }
    return results;
  } finally {
    await snapshots.end();
  }
}

/**
 * Checks the books of every company (or one) against the invariants, read-only: nothing it runs
 * can write. With every schema in one database it reads one snapshot; with schemas on several
 * databases it reads one snapshot of each, and a violation is reported only when a second look,
 * `confirmAfterMs` later, still finds it. Each result counts the items checked and names each
 * violation with its ids.
 */
export async function auditBooks(options: AuditOptions): Promise<InvariantResult[]> {
  const settings = { pageSize: 5_000, inFlightMs: 60_000, ...options };
  const confirmAfterMs = options.confirmAfterMs ?? (databasesOf(options).length > 1 ? 5_000 : 0);
  const first = await runChecks(CHECKS, options, settings);
  const failed = CHECKS.filter((_, i) => first[i]!.violations.length > 0);
  if (confirmAfterMs === 0 || failed.length === 0) return first;
  await new Promise((resolve) => setTimeout(resolve, confirmAfterMs));
  const again = new Map((await runChecks(failed, options, settings)).map((r) => [r.name, r]));
  return first.map((r) => {
    const second = again.get(r.name);
    if (!second) return r;
    const persisting = new Set(second.violations);
    return { ...r, violations: r.violations.filter((v) => persisting.has(v)) };
  });
}

/** One line per invariant: name, items checked, violations (the first `limit` spelled out). */
export function formatInvariants(results: InvariantResult[], limit = 10): string {
  return results
    .map((r) => {
      const head = `${r.violations.length === 0 ? 'ok  ' : 'FAIL'} ${r.name} (${r.checked} checked${r.ms === undefined ? '' : `, ${(r.ms / 1000).toFixed(1)} s`})`;
      if (r.violations.length === 0) return head;
      const shown = r.violations.slice(0, limit).map((v) => `       - ${v}`);
      return [head, ...shown, ...(r.violations.length > limit ? [`       … ${r.violations.length - limit} more`] : [])].join('\n');
    })
    .join('\n');
}
