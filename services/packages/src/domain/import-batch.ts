import type { z } from 'zod';
import {
  PackageImportItem,
  detailsFromZod,
  type PackageImportError,
  type PackageImportOutcome,
  type PackagesImportReply,
} from '@erp/contracts';

/** State of every package an import creates. */
export const ESTADO_EN_BODEGA = 'En bodega';

export interface ValidItem {
  /** Position in the request's `packages`. */
  index: number;
  item: PackageImportItem;
}

export type SucursalQuery = { id_sucursal: number } | { sucursal: string };

/** The wr an error report shows: the text sent, or '' when the item has none. */
export function wrOf(raw: unknown): string {
  if (typeof raw !== 'object' || raw === null) return '';
  const wr = (raw as { wr?: unknown }).wr;
  if (typeof wr === 'string') return wr.trim();
  if (typeof wr === 'number' && Number.isFinite(wr)) return String(wr);
  return '';
}

/** One readable line per item: `campo: problema; campo: problema` (problems of the item as a whole alone). */
export function itemMessage(error: z.ZodError): string {
  const parts: string[] = [];
  for (const [field, messages] of Object.entries(detailsFromZod(error))) {
    for (const message of messages) {
      const text = field === '_' ? message : `${field}: ${message}`;
      if (!parts.includes(text)) parts.push(text);
    }
  }
  return parts.join('; ');
}

const BRANCH_MISSING = 'Debe indicar id_sucursal o sucursal';

/** zod skips the item's branch rule after some field failures (e.g. a non-integer); say it anyway. */
function lacksBranch(raw: unknown): boolean {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return false;
  const { id_sucursal, sucursal } = raw as { id_sucursal?: unknown; sucursal?: unknown };
  return id_sucursal == null && sucursal == null;
}

/** Validates each item on its own: the valid ones keep their index, the others become errors. */
export function validateItems(packages: readonly unknown[]): { valid: ValidItem[]; errors: PackageImportError[] } {
  const valid: ValidItem[] = [];
  const errors: PackageImportError[] = [];
  packages.forEach((raw, index) => {
    const parsed = PackageImportItem.safeParse(raw);
    if (parsed.success) {
      valid.push({ index, item: parsed.data });
      return;
    }
    let message = itemMessage(parsed.error);
    if (lacksBranch(raw) && !message.includes(BRANCH_MISSING)) message = `${message}; ${BRANCH_MISSING}`;
    errors.push({ index, wr: wrOf(raw), message });
  });
  return { valid, errors };
}

/** How the inventory service is asked for the item's branch: the id wins when both are sent. */
export function sucursalQuery(item: PackageImportItem): SucursalQuery {
  return item.id_sucursal != null ? { id_sucursal: item.id_sucursal } : { sucursal: item.sucursal! };
}

/**
 * Splits accepted items into the first of each wr, which may create a package, and the later
 * ones, which are skipped in favour of the first (a wr repeated in one batch is one package).
 */
export function splitRepeats<T extends ValidItem>(items: readonly T[]): { firsts: T[]; repeats: T[] } {
  const seen = new Set<string>();
  const firsts: T[] = [];
  const repeats: T[] = [];
  for (const entry of items) {
    if (seen.has(entry.item.wr)) repeats.push(entry);
    else {
      seen.add(entry.item.wr);
      firsts.push(entry);
    }
  }
  return { firsts, repeats };
}

/**
 * The import's answer: each first of a wr is created when this import inserted it, else
 * skipped with the id the company already had; repeats are skipped with the first's id.
 */
export function buildReply(input: {
  firsts: readonly ValidItem[];
  repeats: readonly ValidItem[];
  errors: readonly PackageImportError[];
  created: ReadonlyMap<string, number>;
  existing: ReadonlyMap<string, number>;
}): PackagesImportReply {
  const idOf = (wr: string): number => {
    const id = input.created.get(wr) ?? input.existing.get(wr);
    // Only possible if a package were deleted between the insert and the lookup.
    if (id === undefined) throw new Error(`No package id for wr ${wr}`);
    return id;
  };
  const items: PackageImportOutcome[] = [
    ...input.firsts.map(({ index, item }) => ({
      index,
      wr: item.wr,
      status: input.created.has(item.wr) ? ('created' as const) : ('skipped' as const),
      id: idOf(item.wr),
    })),
    ...input.repeats.map(({ index, item }) => ({ index, wr: item.wr, status: 'skipped' as const, id: idOf(item.wr) })),
  ].sort((a, b) => a.index - b.index);
  const created = items.filter((i) => i.status === 'created').length;
  return {
    created,
    skipped: items.length - created,
    errors: [...input.errors].sort((a, b) => a.index - b.index),
    items,
  };
}
