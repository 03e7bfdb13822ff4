import { call } from './http';

const MB = 1024 * 1024;

/** One reading of a process's memory from its /metrics (bytes), with how many full collections it has run. */
export interface MemorySample {
  rss: number;
  /** V8's heap in use: live objects and garbage not yet collected. */
  heap: number;
  /** Of it, the young generation (new space): emptied by every scavenge, a few times a second under load. */
  young: number;
  /** The old generation: shrinks only when a full collection (mark-compact) runs. */
  old: number;
  /** Full collections so far (prom-client's count of `major` GCs; it may miss some, the old space's drop tells). */
  fullCollections: number;
}

/** The process's memory now, or undefined when its /metrics did not answer. */
export async function memoryOf(opsUrl: string): Promise<MemorySample | undefined> {
  const res = await call(`${opsUrl}/metrics`, { timeoutMs: 5_000 });
  if (res.status !== 200) return undefined;
  const metric = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)`, 'm').exec(res.text)?.[1] ?? NaN);
  const labelled = (name: string, label: string) =>
    Number(new RegExp(`^${name}\\{[^}]*${label}[^}]*\\} (\\S+)`, 'm').exec(res.text)?.[1] ?? 0);
  return {
    rss: metric('process_resident_memory_bytes'),
    heap: metric('nodejs_heap_size_used_bytes'),
    young: labelled('nodejs_heap_space_size_used_bytes', 'space="new"'),
    old: labelled('nodejs_heap_space_size_used_bytes', 'space="old"'),
    fullCollections: labelled('nodejs_gc_duration_seconds_count', 'kind="major"'),
  };
}

/** Whether a full collection ran between two readings. */
function collectedBetween(before: MemorySample, after: MemorySample): boolean {
  return after.fullCollections > before.fullCollections || after.old < before.old - MB;
}

export interface HeapVerdict {
  /** MB the process kept at most in the first half of the soak (its lowest heap beside the young generation). */
  early: number;
  /** The same in the second half. */
  late: number;
  /** MB the heap came back to after each full collection of the second half (what it really kept, within a second's promotions). */
  afterCollections: number[];
  /** Above `early × 1.2 + 20 MB` even right after a full collection: it keeps what it should let go. */
  leak: boolean;
  /** False when the second half stayed above the limit but saw no full collection to show what was kept. */
  judged: boolean;
  /** Full collections seen over the whole series. */
  collections: number;
}

/**
 * Whether a heap grows over a soak, from readings a second or so apart. What V8 keeps is only
 * visible right after a full collection: between two, the old generation fills with garbage
 * (requests in flight outlive the scavenges and are promoted) up to a limit V8 sets at up to a few
 * times what the last full collection kept, so its lowest reading in a window without a full
 * collection (the old check's "floor") is garbage, not memory kept: the old generation of a sales
 * replica without a leak goes from 31 to 114 MB in 43 s of overload, and back to 31 at the next
 * full collection.
 * So the young generation (emptied by every scavenge) is left out, the first half's lowest
 * reading is the baseline (what was kept then is at most that), and the second half is a leak
 * when even its readings right after a full collection stay above `early × 1.2 + 20 MB` (they are
 * within a few MB of each other without a leak; the floor needed `× 1.5 + 30` for its garbage).
 */
export function heapVerdict(series: readonly MemorySample[]): HeapVerdict {
  const kept = (m: MemorySample) => (m.heap - m.young) / MB;
  const half = Math.floor(series.length / 2);
  const early = Math.min(...series.slice(0, half).map(kept));
  const late = Math.min(...series.slice(half).map(kept));
  const collected = series.map((m, i) => i > 0 && collectedBetween(series[i - 1]!, m));
  const afterCollections = series.flatMap((m, i) => (i >= half && collected[i] ? [kept(m)] : []));
  const collections = collected.filter(Boolean).length;
  if (late <= early * 1.2 + 20) return { early, late, afterCollections, leak: false, judged: true, collections };
  return { early, late, afterCollections, leak: afterCollections.length > 0, judged: afterCollections.length > 0, collections };
}
