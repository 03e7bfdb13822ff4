import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>;
  /** Microseconds on the process's monotonic clock. */
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Wall-clock intervals (ms) of the measured runs: samples outside them (start-up, warm-up, shutdown) are left out. */
export type Window = readonly [from: number, to: number];

export interface ProfileSummary {
  process: string;
  totalMs: number;
  /** Where the CPU went by origin: a package of node_modules, node itself, our code, idle, GC. */
  byOrigin: Array<{ origin: string; ms: number }>;
  /** The functions with the most self time. */
  topFunctions: Array<{ name: string; ms: number }>;
}

/** `@scope/pkg` or `pkg` for a file under node_modules; `node:*` for node's own; the repo folder otherwise. */
function originOf(url: string, functionName: string): string {
  if (functionName === '(idle)' || functionName === '(program)' || functionName === '(garbage collector)') return functionName;
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const [first, second] = url.slice(nm + '/node_modules/'.length).split('/');
    return first?.startsWith('@') ? `${first}/${second}` : (first ?? url);
  }
  if (url.startsWith('node:') || url === '') return 'node (built-in)';
  const match = /\/(services\/[^/]+|libs\/[^/]+|test\/[^/]+)\//.exec(url);
  return match ? match[1]! : url;
}

/**
 * Self time per origin and per function of the profiles in each subfolder (one per process, all
 * its threads summed), counting only samples inside the measured windows. A profile ends when its
 * process exits, so its samples are placed on the wall clock from the process's exit time.
 */
export async function summarizeProfiles(
  dir: string,
  windows: readonly Window[],
  exitedAt: Readonly<Record<string, number | undefined>>,
  top = 12,
): Promise<ProfileSummary[]> {
  const processes = (await readdir(dir).catch(() => [] as string[])).sort();
  const out: ProfileSummary[] = [];
  for (const name of processes) {
    const files = (await readdir(path.join(dir, name)).catch(() => [] as string[])).filter((f) => f.endsWith('.cpuprofile'));
    if (files.length === 0) continue;
    const origins = new Map<string, number>();
    const functions = new Map<string, number>();
    let total = 0;
    for (const file of files) {
      const profile = JSON.parse(await readFile(path.join(dir, name, file), 'utf8')) as CpuProfile;
      const byId = new Map(profile.nodes.map((n) => [n.id, n]));
      const exit = exitedAt[name];
      if (exit === undefined) continue;
      // Wall-clock ms of a sample = exit − (endTime − sample time).
      let at = profile.startTime;
      profile.samples.forEach((id, i) => {
        at += profile.timeDeltas[i] ?? 0;
        const wall = exit - (profile.endTime - at) / 1000;
        if (!windows.some(([from, to]) => wall >= from && wall <= to)) return;
        const node = byId.get(id);
        if (!node) return;
        const ms = (profile.timeDeltas[i] ?? 0) / 1000;
        total += ms;
        const { functionName, url, lineNumber } = node.callFrame;
        const origin = originOf(url, functionName);
        origins.set(origin, (origins.get(origin) ?? 0) + ms);
        if (origin !== '(idle)') {
          const label = `${functionName || '(anonymous)'} ${origin}${url && !url.startsWith('node:') ? `:${lineNumber + 1}` : ''}`;
          functions.set(label, (functions.get(label) ?? 0) + ms);
        }
      });
    }
    const sorted = (m: Map<string, number>) => [...m.entries()].sort((a, b) => b[1] - a[1]);
    out.push({
      process: name,
      totalMs: total,
      byOrigin: sorted(origins)
        .slice(0, top)
        .map(([origin, ms]) => ({ origin, ms })),
      topFunctions: sorted(functions)
        .slice(0, top)
        .map(([fn, ms]) => ({ name: fn, ms })),
    });
  }
  return out;
}
