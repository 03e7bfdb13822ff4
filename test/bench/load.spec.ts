import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cpuBetween, cpuSeconds, withPeakRss } from './run/load';
import { startProcess, stopProcesses, type BenchProcess } from './run/processes';

const MB = 2 ** 20;

describe('the largest resident set and the CPU time the benchmark reports for a run', () => {
  let dir: string;
  let proc: BenchProcess;
  let lines: string[] = [];
  const printed = async (line: string, times: number) => {
    while (lines.filter((l) => l === line).length < times) await new Promise((resolve) => setTimeout(resolve, 10));
  };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'bench-rss-'));
    // On each SIGUSR2: 96 MB touched, then freed and collected, then "freed".
    const script = path.join(dir, 'allocator.js');
    writeFileSync(
      script,
      `process.on('SIGUSR2', () => {
         let block = Buffer.alloc(96 * 1024 * 1024, 1);
         block = undefined;
         global.gc();
         setTimeout(() => console.log('freed'), 200);
       });
       // On each SIGUSR1: 400 ms of CPU, then "spun".
       process.on('SIGUSR1', () => {
         const until = process.cpuUsage();
         while ((process.cpuUsage(until).user + process.cpuUsage(until).system) < 400_000);
         console.log('spun');
       });
       console.log('ready');
       setInterval(() => {}, 1000);`,
    );
    proc = startProcess('allocator', script, { PATH: process.env.PATH }, dir, ['--expose-gc']);
    proc.child.stdout!.on('data', (chunk: Buffer) => (lines = lines.concat(chunk.toString().trim().split('\n'))));
    await printed('ready', 1);
  });
  afterAll(async () => {
    await stopProcesses([proc]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('counts a peak reached and freed within the run, and nothing from before it', async () => {
    proc.child.kill('SIGUSR2');
    await printed('freed', 1);
    const after = await withPeakRss([proc], () => new Promise((resolve) => setTimeout(resolve, 50)));
    expect(after.rss.allocator).toBeLessThan(80 * MB);

    const during = await withPeakRss([proc], async () => {
      proc.child.kill('SIGUSR2');
      await printed('freed', 2);
      return 'ran';
    });
    expect(during.value).toBe('ran');
    expect(during.rss.allocator).toBeGreaterThanOrEqual(96 * MB);
  });

  it('counts the CPU time a process used between two readings, and none while it was idle', async () => {
    const idle = await cpuSeconds([proc]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const busy = await cpuSeconds([proc]);
    expect(cpuBetween(idle, busy).allocator).toBeLessThan(0.1);
    proc.child.kill('SIGUSR1');
    await printed('spun', 1);
    const after = await cpuSeconds([proc]);
    expect(cpuBetween(busy, after).allocator).toBeGreaterThanOrEqual(0.38);
    expect(cpuBetween(busy, after).allocator).toBeLessThan(0.8);
  });
});
