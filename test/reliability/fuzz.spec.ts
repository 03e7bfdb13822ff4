import { Stack } from '../support/stack';
import { companiesOf, reliabilityFixture } from './support/fixture';
import { formatFuzzReport, fuzzApi } from './support/fuzz';

/**
 * Property-based input fuzzing of every endpoint (the short run inside `npm test`; the chaos
 * run generates thousands of cases per endpoint). `FUZZ_RUNS` and `FUZZ_SEED` reproduce a run.
 */
describe('every endpoint under generated input', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await Stack.start({
      gateway: { RATE_LIMIT_STANDARD: '1000000', RATE_LIMIT_DATE_FILTERED: '1000000', AUTH_FAILURES_PER_WINDOW: '1000000' },
    });
  });
  afterAll(() => stack.stop());

  it('never answers 5xx, always the error envelope with code = status and a documented reason, and a refused request changes no data', async () => {
    const companies = companiesOf(await stack.seed(reliabilityFixture()));
    const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 100_000);
    const runs = Number(process.env.FUZZ_RUNS ?? 100);
    const report = await fuzzApi(
      { baseUrl: stack.baseUrl, databases: { databaseUrl: stack.iso.databaseUrl }, companies },
      { runs, webhookRuns: Math.ceil(runs / 2), seed },
    );
    const text = formatFuzzReport(report);
    // The whole report on failure: every endpoint's counts and the requests that broke a guarantee.
    if (report.violations.length > 0) throw new Error(text);
    expect(report.refusedWritesChecked).toBeGreaterThan(100);
  }, 300_000); // about a minute on two busy cores; the default 60 s is too tight
});
