import type { DatabaseUrls, Query } from '../schema-clients';

/** One invariant, checked over `checked` items; `violations` names what broke it, with ids (empty when it holds). */
export interface InvariantResult {
  name: string;
  checked: number;
  violations: string[];
  /** Time the check took, when the audit ran it. */
  ms?: number;
}

/**
 * Connections that may read every schema (`databaseUrls` for the schemas a deployment moved to a
 * server of its own); the audit opens them read-only and writes nothing. Each check reads one
 * schema per query; what spans services is compared by key in the checks.
 */
export interface AuditOptions extends DatabaseUrls {
  /**
   * How long to wait before checking again what failed: only violations seen both times are
   * reported. Several databases cannot be read in one snapshot, so a change committed between two
   * of their reads can show for an instant; the default is 0 with one database, 5 s with several.
   */
  confirmAfterMs?: number;
  /** Only this company (every company when absent). */
  empresaId?: number;
  /** Rows per page of the checks that walk sales, reservations and returns one by one. */
  pageSize?: number;
  /**
   * Work younger than this is in flight, not stuck: a reservation still open, a delivery not yet
   * processed, an event not yet published. 0 when the system is known to be at rest (the chaos run
   * waits for it).
   */
  inFlightMs?: number;
  /** Number each sale document type started at, by name; otherwise the lowest number it issued. */
  initialCorrelatives?: Record<string, number>;
}

export interface Empresa {
  id: number;
  venderSinStock: boolean;
}
/** One invariant of the books, run per company (or once, when `global`) over one snapshot of each database. */
export interface Check {
  name: string;
  /** Runs once for the whole database instead of per company (tables without a company). */
  global?: boolean;
  run: (q: Query, empresa: Empresa, options: Settings) => Promise<{ checked: number; violations: string[] }>;
}
export type Settings = Required<Pick<AuditOptions, 'pageSize' | 'inFlightMs'>> &
  AuditOptions & {
    /** One query function per database, for what every database holds (outboxes). */
    databases: Query[];
  };

/** SQL for the instant `ms` ago: work younger than that is in flight. */
export const olderThan = (ms: number) => `now() - make_interval(secs => ${ms / 1000})`;

/**
 * Walks a company's rows of a table in pages of `pageSize` by `id` (keyset, so a page costs the
 * same at any depth), handing each page's ids (and the first and last of them) to `visit`.
 */
export async function inPages(
  q: Query,
  table: string,
  empresaId: number,
  pageSize: number,
  visit: (ids: number[], range: { first: number; last: number }) => Promise<void>,
  where = 'true',
): Promise<number> {
  let last = 0;
  let seen = 0;
  for (;;) {
    const rows = await q(`select id from ${table} where empresa_id = $1 and id > $2 and ${where} order by id limit $3`, [
      empresaId,
      last,
      pageSize,
    ]);
    if (rows.length === 0) return seen;
    const ids = rows.map((r) => Number(r.id));
    seen += ids.length;
    last = ids[ids.length - 1]!;
    await visit(ids, { first: ids[0]!, last });
  }
}
