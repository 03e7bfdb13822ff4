/** The service that owns each subject family; also the queue group its replicas share. */
export const SERVICES = ['gateway', 'sales', 'inventory', 'returns', 'packages', 'webhook-ingest', 'subscriptions', 'exports'] as const;
export type ServiceName = (typeof SERVICES)[number];

/** The Postgres schema each service owns (its name with `_` for `-`). */
export const schemaOf = (service: ServiceName): string => service.replace(/-/g, '_');

/**
 * The database a service's schema lives in: `DATABASE_URL_<SCHEMA>` (e.g. `DATABASE_URL_SALES`)
 * when a deployment moved that schema to a server of its own, else the shared `DATABASE_URL`.
 */
export function databaseUrlOf(service: ServiceName, env: Readonly<Record<string, string | undefined>>, fallback: string): string {
  return env[`DATABASE_URL_${schemaOf(service).toUpperCase()}`] ?? env.DATABASE_URL ?? fallback;
}

/**
 * The read-only endpoint (a streaming replica) of a service's schema: `DATABASE_URL_READ_<SCHEMA>`
 * (e.g. `DATABASE_URL_READ_SALES`), else the shared `DATABASE_URL_READ`, but only for a schema
 * still in the shared database: a replica of that database does not hold a schema moved to a
 * server of its own. Undefined: every read goes to the schema's own database.
 */
export function readDatabaseUrlOf(service: ServiceName, env: Readonly<Record<string, string | undefined>>): string | undefined {
  const schema = schemaOf(service).toUpperCase();
  return env[`DATABASE_URL_READ_${schema}`] ?? (env[`DATABASE_URL_${schema}`] === undefined ? env.DATABASE_URL_READ : undefined);
}

/**
 * The JetStream streams under a prefix, by the first token of the subjects each carries. `events`:
 * what happened in a company, every event of which the partners' event log reads. `intake`: work a
 * service hands itself through a stream (a shop's deliveries, stored and waiting to become sales),
 * which only that service reads: a sale day's burst of them costs the event log nothing.
 */
export const STREAM_FAMILIES = ['events', 'intake'] as const;
export type StreamFamily = (typeof STREAM_FAMILIES)[number];

/** Name of the stream of `family` under a prefix (`erp_EVENTS`, `erp_INTAKE`). */
export function streamName(prefix: string, family: StreamFamily = 'events'): string {
  return `${prefix.replace(/[^A-Za-z0-9_-]/g, '_')}_${family.toUpperCase()}`;
}

/** The family of the stream that carries `subject` (an event subject without the prefix). */
export function streamFamilyOf(subject: string): StreamFamily {
  const family = STREAM_FAMILIES.find((f) => subject.startsWith(`${f}.`));
  if (!family)
    throw new Error(`No stream carries ${subject}: event subjects start with ${STREAM_FAMILIES.map((f) => `${f}.`).join(' or ')}`);
  return family;
}

/** Name of the stream under a prefix that carries `subject` (an event subject without the prefix). */
export function streamOfSubject(prefix: string, subject: string): string {
  return streamName(prefix, streamFamilyOf(subject));
}
