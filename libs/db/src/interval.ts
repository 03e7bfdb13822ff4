import { sql, type RawBuilder } from 'kysely';

/** The statement's `now()` plus `ms` milliseconds: when a lease ends, a check is due, a file expires. */
export function millisecondsFromNow(ms: number): RawBuilder<Date> {
  return sql<Date>`now() + ${ms} * interval '1 millisecond'`;
}

/** The statement's `now()` less `ms` milliseconds (to the microsecond): rows written before it are stale. */
export function millisecondsAgo(ms: number): RawBuilder<Date> {
  return sql<Date>`now() - make_interval(secs => ${ms / 1000})`;
}
