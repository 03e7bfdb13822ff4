import { schemaOf } from '@erp/contracts';
import { measureCapacity, type CapacityReport } from './measure-capacity';
import { ALL_SERVICES } from './support/cluster';
import { privateInfraMissing } from './support/private-infra';

/**
 * `npm run capacity` at the smallest scale that still takes every step (its own servers, every
 * service, the fixture, a warm-up, a sampled window, pg_stat_statements, NATS, Redis and each
 * process read at both ends), so the command behind docs/capacity.md cannot rot between runs.
 */
describe('measureCapacity', () => {
  let sut: CapacityReport;

  beforeAll(async () => {
    expect(privateInfraMissing()).toEqual([]);
    sut = await measureCapacity({ workers: 1, warmupSeconds: 1, seconds: 2, pool: 2 });
  }, 150_000);

  it('measures a window of the mixed load, answered', () => {
    expect(sut.seconds).toBeGreaterThanOrEqual(2);
    expect(sut.requests).toBeGreaterThan(0);
    const answered = Object.entries(sut.answers).filter(([status]) => /^2\d\d$/.test(status));
    expect(answered.reduce((n, [, count]) => n + count, 0)).toBeGreaterThan(0);
  });

  it('attributes Postgres backends, statements and connections to every schema, each in a database of its own', () => {
    expect(sut.schemas.map((s) => s.schema).sort()).toEqual(ALL_SERVICES.map(schemaOf).sort());
    for (const schema of sut.schemas) {
      expect(schema.cpuSeconds).toBeGreaterThanOrEqual(0);
      expect(schema.execMs).toBeGreaterThanOrEqual(0);
      expect(schema.peakBackends).toBeGreaterThanOrEqual(1);
      // The pool each service was given bounds its backends.
      expect(schema.peakBackends).toBeLessThanOrEqual(2);
    }
    expect(sut.schemas.reduce((cpu, s) => cpu + s.cpuSeconds, 0)).toBeGreaterThan(0);
    expect(sut.schemas.reduce((calls, s) => calls + s.calls, 0)).toBeGreaterThan(0);
  });

  it('reads what the load cost NATS (events stored) and Redis (the quota’s commands), and each service’s process', () => {
    expect(sut.nats.msgsIn).toBeGreaterThan(0);
    expect(sut.nats.events).toBeGreaterThan(0);
    expect(sut.nats.cpuSeconds).toBeGreaterThanOrEqual(0);
    expect(sut.redis.commands).toBeGreaterThan(0);
    expect(sut.redis.usedMemoryBytes).toBeGreaterThan(0);
    // One process of each service (a start given up and made again is numbered on).
    expect(sut.processes.map((p) => p.label.replace(/#\d+$/, '')).sort()).toEqual([...ALL_SERVICES].sort());
    for (const p of sut.processes) {
      expect(p.cpuSeconds).toBeGreaterThanOrEqual(0);
      expect(p.rssBytes).toBeGreaterThan(0);
    }
  });

  it('prints the report docs/capacity.md quotes: a row per schema and per process, no figure left undefined', () => {
    expect(sut.text).toMatch(/^# npm run capacity \(/);
    expect(sut.text).toContain('| schema (database) | Postgres CPU, s |');
    expect(sut.text).toContain('| process | CPU, s | cores |');
    for (const { schema } of sut.schemas) expect(sut.text).toMatch(new RegExp(`^\\| ${schema} \\| \\d+\\.\\d\\d \\|`, 'm'));
    for (const { label } of sut.processes) expect(sut.text).toContain(`| ${label} |`);
    expect(sut.text).toMatch(/^NATS: /m);
    expect(sut.text).toMatch(/^Redis: /m);
    expect(sut.text).not.toMatch(/NaN|Infinity|undefined/);
  });
});
