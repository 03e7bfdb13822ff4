import { gunzipSync } from 'node:zlib';
import { API_BASE } from '@erp/contracts';
import type { InvariantResult } from '@erp/back-office';
import type { Company, CompanyRef } from './fixture';
import { call } from './http';
import { sleep } from './wait';

const RECURSOS = ['sales', 'returns', 'inventory'] as const;
type Recurso = (typeof RECURSOS)[number];

/**
 * Partners taking bulk exports while the faults go on: every `everyMs`, one company asks for an
 * export of one resource (in turn), through whichever gateway is up. An export answered or not
 * (the request may have been lost with its gateway) is checked afterwards all the same: the check
 * reads every export of each company from the API.
 */
export class ExportRequests {
  private running = false;
  private loop: Promise<void> | undefined;
  /** Exports asked for and accepted (202), refused for the limit of running ones (409), or not answered. */
  readonly tally = { accepted: 0, refused: 0, unanswered: 0 };

  constructor(
    private readonly gateways: () => string[],
    private readonly companies: readonly Company[],
    private readonly everyMs = 4_000,
  ) {}

  start(): void {
    this.running = true;
    this.loop = (async () => {
      for (let n = 0; this.running; n++) {
        const company = this.companies[n % this.companies.length]!;
        const recurso = RECURSOS[Math.floor(n / this.companies.length) % RECURSOS.length]!;
        const gateways = this.gateways();
        const answer = await call(`${gateways[n % gateways.length]}${API_BASE}/exports`, {
          method: 'POST',
          key: company.key,
          json: { recurso, filtros: {} },
          timeoutMs: 15_000,
        });
        if (answer.status === 202) this.tally.accepted++;
        else if (answer.status === 409) this.tally.refused++;
        else this.tally.unanswered++;
        await sleep(this.everyMs);
      }
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }
}

/**
 * Whether `whole` holds `part`: the same value, or for objects every field of `part` held by the
 * same field of `whole`, element by element in arrays. A file's line is the object's `GET` by id,
 * which may say more than its item in the list (a product's stock entries carry their timestamps).
 */
function holds(whole: unknown, part: unknown): boolean {
  if (Array.isArray(part)) return Array.isArray(whole) && whole.length === part.length && part.every((p, i) => holds(whole[i], p));
  if (part !== null && typeof part === 'object') {
    if (whole === null || typeof whole !== 'object' || Array.isArray(whole)) return false;
    return Object.entries(part).every(([key, value]) => holds((whole as Record<string, unknown>)[key], value));
  }
  return whole === part;
}

/**
 * The filters of each list that select by what an object never changes, or by what only ever
 * brings it in (`updated_since`: `updated_at` only grows): a filtered delta feed answers every
 * object that comes under such a filter after the cursor, and none can leave it. Under any other
 * filter (a sale's `estado` or `fecha`, a product's stock or name) an object can leave after the
 * snapshot, and the feed, which answers what matches now, cannot say so: such an export is no
 * snapshot the feed continues, and is counted apart instead of compared.
 */
const STABLE_FILTERS: Record<Recurso, readonly string[]> = {
  sales: ['updated_since'],
  returns: ['fecha_inicio', 'fecha_fin', 'id_venta', 'updated_since'],
  inventory: ['updated_since'],
};

/** An export's filters as the query of its resource's list (the same names and values, by contract). */
function filterQuery(filtros: Record<string, unknown>): string {
  return Object.entries(filtros)
    .map(([name, value]) => `&${encodeURIComponent(name)}=${encodeURIComponent(String(value))}`)
    .join('');
}

/**
 * Every object a resource's list holds now under `filters` (a query suffix), by id, as its JSON
 * text: the delta feed read from its start, or from `cursor`.
 */
async function feed(gateway: string, key: string, recurso: Recurso, filters: string, cursor?: string): Promise<Map<number, string>> {
  const objects = new Map<number, string>();
  for (let next: string | undefined = cursor, first = true; first || next; first = false) {
    const answer = await call(
      `${gateway}${API_BASE}/${recurso}?order_by=updated_at&per_page=200${filters}${next ? `&cursor=${next}` : ''}`,
      { key },
    );
    if (answer.status !== 200) throw new Error(`GET /${recurso} in cursor mode answered ${answer.status}: ${answer.text.slice(0, 200)}`);
    for (const object of answer.body.data as Array<{ id: number }>) objects.set(object.id, JSON.stringify(object));
    next = answer.body.pagination.has_more ? (answer.body.pagination.next_cursor as string) : undefined;
  }
  return objects;
}

/**
 * A file's bytes as a partner gets them: a download that breaks (its gateway or the store's node
 * restarting under it) is tried again, a few times.
 */
async function download(url: string, key: string): Promise<{ bytes?: Buffer; retries: number; failure?: string }> {
  let failure = '';
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      const res = await fetch(url, { headers: { Authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(60_000) });
      if (res.status === 200) return { bytes: Buffer.from(await res.arrayBuffer()), retries: attempt };
      failure = `status ${res.status}: ${(await res.text()).slice(0, 200)}`;
    } catch (err) {
      failure = String((err as Error).cause ?? err);
    }
    await sleep(1_000);
  }
  return { retries: 4, failure };
}

/**
 * With the system at rest, every export of the companies (read from `GET /exports`) has ended,
 * and each completed one is a consistent snapshot that hands over to delta sync: its file's lines
 * (ordered by id, none twice, as many as `objetos`), overwritten by what `GET /{recurso}` answers
 * after its `cursor` under the export's own filters, are exactly the objects the list shows now
 * under those filters (a line may say more than the list's item: it is the object's `GET` by id).
 * A line missed, doubled or older than the snapshot would show; so would a change after the
 * cursor that the feed never answers.
 *
 * Every export of the companies is read, those asked for before the phase included (the isolation
 * sweep's, filtered by the other company's sale) and those the fuzzing's `DELETE /exports/{id}`
 * reached: a completed export whose partner removed its file answers `descarga: null` and a 404
 * for the file, as the API documents, and is counted apart; one whose file is gone while the API
 * still offers it (`descarga` set, or `expira` not yet come) is a violation.
 */
export async function checkExports(gateway: string, companies: Record<CompanyRef, Company>): Promise<InvariantResult[]> {
  const name = 'every completed export is one snapshot: its lines, then the changes after its cursor, are every object as it ends';
  const violations: string[] = [];
  let checked = 0;
  let retried = 0;
  let removed = 0;
  let unstable = 0;
  const states = new Map<string, number>();
  for (const company of Object.values(companies)) {
    const current = new Map<string, Map<number, string>>();
    for (let page = 1, more = true; more; page++) {
      const answer = await call(`${gateway}${API_BASE}/exports?per_page=100&page=${page}`, { key: company.key });
      if (answer.status !== 200) throw new Error(`GET /exports answered ${answer.status}: ${answer.text.slice(0, 200)}`);
      more = answer.body.pagination.has_next as boolean;
      for (const exportacion of answer.body.data as Array<{
        id: number;
        recurso: Recurso;
        filtros: Record<string, unknown>;
        estado: string;
        objetos: number;
        cursor: string;
        descarga: string | null;
        expira: string | null;
      }>) {
        states.set(exportacion.estado, (states.get(exportacion.estado) ?? 0) + 1);
        const label = `${company.ref}: export ${exportacion.id} of ${exportacion.recurso}`;
        if (exportacion.estado === 'en_cola' || exportacion.estado === 'procesando') {
          violations.push(`${label} still ${exportacion.estado} at rest`);
          continue;
        }
        if (exportacion.estado !== 'completada') continue;
        const url = `${gateway}${API_BASE}/exports/${exportacion.id}/download`;
        if (exportacion.descarga === null) {
          // Its partner removed the file (DELETE on a completed export brings `expira` to that moment) or it expired.
          const gone = await call(url, { key: company.key });
          if (exportacion.expira === null || Date.parse(exportacion.expira) > Date.now())
            violations.push(`${label}: completada without a file before it expires (expira ${exportacion.expira})`);
          else if (gone.status !== 404 || gone.body?.reason !== 'exportacion_no_encontrada')
            violations.push(`${label}: its file was removed, yet its download answered ${gone.status}: ${gone.text.slice(0, 200)}`);
          else removed++;
          continue;
        }
        const filtros = exportacion.filtros ?? {};
        if (Object.keys(filtros).some((filtro) => !STABLE_FILTERS[exportacion.recurso].includes(filtro))) {
          unstable++;
          continue;
        }
        checked++;
        const file = await download(url, company.key);
        retried += file.retries;
        if (file.bytes === undefined) {
          violations.push(`${label}: download failed ${file.retries + 1} times: ${file.failure}`);
          continue;
        }
        const lines = gunzipSync(file.bytes)
          .toString('utf8')
          .split('\n')
          .filter((line) => line.length > 0);
        const ids = lines.map((line) => (JSON.parse(line) as { id: number }).id);
        if (lines.length !== exportacion.objetos) violations.push(`${label}: ${lines.length} lines, objetos says ${exportacion.objetos}`);
        if (ids.some((id, i) => i > 0 && id <= ids[i - 1]!)) violations.push(`${label}: lines not in strictly ascending id order`);
        const filters = filterQuery(filtros);
        const merged = new Map(lines.map((line, i) => [ids[i]!, JSON.stringify(JSON.parse(line))]));
        for (const [id, text] of await feed(gateway, company.key, exportacion.recurso, filters, exportacion.cursor)) merged.set(id, text);
        const listed = `${exportacion.recurso}?${filters}`;
        if (!current.has(listed)) current.set(listed, await feed(gateway, company.key, exportacion.recurso, filters));
        const now = current.get(listed)!;
        const missing = [...now.keys()].filter((id) => !merged.has(id));
        const extra = [...merged.keys()].filter((id) => !now.has(id));
        const differ = [...now.keys()].filter((id) => merged.has(id) && !holds(JSON.parse(merged.get(id)!), JSON.parse(now.get(id)!)));
        if (missing.length > 0)
          violations.push(
            `${label}: ${missing.length} objects neither in the file nor after its cursor (${missing.slice(0, 5).join(', ')})`,
          );
        if (extra.length > 0) violations.push(`${label}: ${extra.length} objects the list does not have (${extra.slice(0, 5).join(', ')})`);
        if (differ.length > 0) {
          const id = differ[0]!;
          violations.push(
            `${label}: ${differ.length} objects older than the list's (${differ.slice(0, 5).join(', ')}); ${id} in the export then the feed: ${merged.get(id)}, in the list: ${now.get(id)}`,
          );
        }
      }
    }
  }
  const summary = [...states.entries()].map(([estado, n]) => `${n} ${estado}`).join(', ');
  const apart = [
    ...(removed > 0 ? [`${removed} whose file was removed (DELETE or expiry)`] : []),
    ...(unstable > 0 ? [`${unstable} filtered by what an object can stop matching, not compared`] : []),
  ];
  return [
    {
      name: `${name} (${summary || 'none'}${apart.length > 0 ? `; ${apart.join(', ')}` : ''}; downloads tried again: ${retried})`,
      checked,
      violations,
    },
  ];
}
