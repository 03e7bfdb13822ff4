import { apiRoutes } from '../../services/gateway/src/http/routes';
import { spawnService, type ServiceProcess } from '../support/processes';
import { startFastSweepingInventory } from '../support/sales-fixture';
import { Stack, stackEnv } from '../support/stack';
import { INITIAL_CORRELATIVES, companiesOf, reliabilityFixture, type Company, type CompanyRef } from './support/fixture';
import { checkInvariants, formatInvariants, settle } from './support/invariants';
import { Load } from './support/load';
import { sleep } from './support/wait';

/**
 * The short crash scenario of the reliability suite (the full one, with every service, NATS,
 * Redis and Postgres, is `npm run test:chaos`): the sales service is killed with SIGKILL in the
 * middle of a mixed load and started again; afterwards every acknowledged write is there exactly
 * once and stock, correlatives, reservations and the webhook inbox are all exact.
 */
describe('sales killed with SIGKILL under a mixed load', () => {
  let stack: Stack;
  let companies: Record<CompanyRef, Company>;
  let sales: ServiceProcess | undefined;
  // A change killed after inventory applied its stock revision is squared within seconds.
  const salesEnv = () => stackEnv(stack.iso, { REVISION_SWEEP_INTERVAL_MS: '500', REVISION_SQUARE_AFTER_MS: '5000' });

  beforeAll(async () => {
    stack = await Stack.start({ gateway: { RATE_LIMIT_STANDARD: '1000000', RATE_LIMIT_DATE_FILTERED: '1000000' } });
    companies = companiesOf(await stack.seed(reliabilityFixture()));
    await startFastSweepingInventory(stack, { reservationMs: 1_500, sweepMs: 250, checkMs: 1_000 });
    await stack.stopService('sales'); // the one to kill runs as its own process
    sales = await spawnService('sales', salesEnv());
  });
  afterAll(async () => {
    await sales?.stop();
    await stack.stop();
  });

  it('loses no acknowledged write and leaves stock, correlatives, reservations and the inbox exact', async () => {
    const load = new Load({
      gateways: () => [stack.baseUrl],
      companies,
      workers: 6,
      thinkMs: 15,
      runId: 'crash',
      updates: apiRoutes({ standard: 1, withDateFilters: 1 }).some((r) => r.method === 'put' && r.path === '/sales/:id'),
      admin: stack.admin,
    });
    const acked = () => [...load.ledger.sales.values()].filter((s) => s.acked).length;
    load.start();
    // Killed once the load is writing through it (a busy machine takes longer to get there).
    await sleep(5_000);
    for (let waited = 0; acked() <= 5 && waited < 20_000; waited += 500) await sleep(500);
    const beforeKill = acked();
    sales!.child.kill('SIGKILL');
    await sales!.exit;
    await sleep(1_000);
    sales = await spawnService('sales', salesEnv());
    const afterRestart = acked();
    // The load goes on until it has written through the restarted service too (its workers may
    // first sit out timeouts of requests the killed one never answered), 30 s at most.
    await sleep(6_000);
    for (let waited = 0; acked() <= afterRestart + 5 && waited < 24_000; waited += 500) await sleep(500);
    await load.stop();

    // An event in flight to the killed service comes back after its consumer's ack wait (30 s).
    const pending = await settle({ databaseUrl: stack.iso.databaseUrl }, 60_000);
    expect(pending).toEqual([]);
    const results = await checkInvariants({
      databases: { databaseUrl: stack.iso.databaseUrl },
      ledger: load.ledger,
      companies,
      initialCorrelatives: INITIAL_CORRELATIVES,
      gateway: stack.baseUrl,
    });
    const report = `${load.tally.summary()}\n${formatInvariants(results)}`;
    if (results.some((r) => r.violations.length > 0)) throw new Error(report);
    // The load reached the sales service on both sides of the crash.
    expect(beforeKill).toBeGreaterThan(5);
    expect(acked()).toBeGreaterThan(afterRestart + 5);
  }, 180_000);
});
