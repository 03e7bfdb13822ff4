import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { imageEnv } from '../support/dockerfile';
import { startProcess } from './run/processes';

describe('the processes the benchmark starts', () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(path.join(tmpdir(), 'bench-processes-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('run a built entry point with the environment of the images: the heap the Dockerfile caps, its malloc settings', async () => {
    const dockerfile = readFileSync(path.resolve(__dirname, '../../Dockerfile'), 'utf8');
    const probe = path.join(dir, 'probe.js');
    writeFileSync(
      probe,
      `const v8 = require('node:v8');
       console.log(JSON.stringify({
         heapLimitMb: v8.getHeapStatistics().heap_size_limit / 2 ** 20,
         env: { NODE_ENV: process.env.NODE_ENV, MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX, MALLOC_MMAP_THRESHOLD_: process.env.MALLOC_MMAP_THRESHOLD_, SERVICE: process.env.SERVICE },
       }));`,
    );
    const proc = startProcess('probe', probe, { PATH: process.env.PATH }, dir);
    expect(await proc.exited).toBe(0);
    const seen = JSON.parse(readFileSync(proc.logFile, 'utf8')) as { heapLimitMb: number; env: Record<string, string | undefined> };

    const oldSpace = Number(/--max-old-space-size=(\d+)/.exec(dockerfile)![1]);
    // The limit is the old space the Dockerfile sets plus the young generation's semi-spaces.
    expect(seen.heapLimitMb).toBeGreaterThanOrEqual(oldSpace);
    expect(seen.heapLimitMb).toBeLessThan(oldSpace + 64);
    expect(seen.env).toEqual({
      NODE_ENV: 'production',
      MALLOC_ARENA_MAX: /MALLOC_ARENA_MAX=(\d+)/.exec(dockerfile)![1],
      MALLOC_MMAP_THRESHOLD_: /MALLOC_MMAP_THRESHOLD_=(\d+)/.exec(dockerfile)![1],
    });
    expect(imageEnv()).not.toHaveProperty('SERVICE');
  });

  it("never take another stage's environment: a Dockerfile without a runtime stage is refused", () => {
    expect(() => imageEnv(['FROM node:24 AS build', 'ENV NODE_ENV=development'])).toThrow(/no stage named runtime/);
  });
});
