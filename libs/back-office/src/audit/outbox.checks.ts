import type { Row } from '../schema-clients';
import { olderThan, type Check } from './check';

export const outboxesPublished: Check = {
  name: 'every outbox is published',
  global: true,
  run: async (_q, _e, o) => {
    const violations: string[] = [];
    let checked = 0;
    for (const q of o.databases) {
      const schemas = await q(`select table_schema as schema from information_schema.tables where table_name = 'outbox' order by 1`);
      for (const { schema } of schemas) {
        const [row] = (await q(
          `select count(*)::int as n, count(*) filter (where published_at is null and created_at < ${olderThan(o.inFlightMs)})::int as pending from ${schema}.outbox`,
        )) as [Row];
        checked += row.n;
        if (row.pending > 0) violations.push(`${schema}: ${row.pending} events unpublished`);
      }
    }
    return { checked, violations };
  },
};
