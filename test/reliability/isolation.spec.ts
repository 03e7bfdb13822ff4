import { apiRoutes } from '../../services/gateway/src/http/routes';
import { Stack } from '../support/stack';
import { companiesOf, reliabilityFixture } from './support/fixture';
import { isolationSweep } from './support/isolation';

/** Guarantee 1 over the whole route table: one company's key never sees or touches the other's data. */
describe('the tenant isolation sweep', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await Stack.start({ gateway: { RATE_LIMIT_STANDARD: '1000000', RATE_LIMIT_DATE_FILTERED: '1000000' } });
  });
  afterAll(() => stack.stop());

  it("calls every endpoint with one company's key and the other's ids, filters and references, and leaks nothing", async () => {
    const companies = companiesOf(await stack.seed(reliabilityFixture()));
    const report = await isolationSweep({ baseUrl: stack.baseUrl, databases: { databaseUrl: stack.iso.databaseUrl }, companies });
    expect(report.violations).toEqual([]);
    const routes = apiRoutes({ standard: 1, withDateFilters: 1 }).map(
      (r) => `${r.method.toUpperCase()} ${r.path.replace(/:(\w+)/g, '{$1}')}`,
    );
    expect(report.endpoints).toEqual(expect.arrayContaining(routes));
    expect(report.checks).toBeGreaterThan(100);
  });
});
