/** The two Postgres roles of one service's schema. */
export interface SchemaRoles {
  schema: string;
  /** Owns the schema and everything in it; the migration Job connects as this role. */
  owner: string;
  /** What the running service connects as: data rights on its own schema's tables, nothing else. */
  runtime: string;
}

/** Connections each kind of role may hold at once. */
export interface ConnectionLimits {
  /** A service's runtime role: its pooler's server connections for that user (pgbouncer's pool size), or replicas × DB_POOL_MAX without one. */
  runtime: number;
  /** A schema owner: the migration Job holds one; a second for an operator's session. */
  owner: number;
  /** The read-only auditor: the audit and a backup running at once. */
  auditor: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = { runtime: 11, owner: 2, auditor: 3 };

/** The read-only role of the audit (`npm run admin -- audit`) and of backups (`pg_dump`). */
export const AUDITOR_ROLE = 'auditor';

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;
const literal = (value: string) => `'${value.replace(/'/g, "''")}'`;

const createRole = (name: string) =>
  `do $$ begin
  if not exists (select 1 from pg_roles where rolname = ${literal(name)}) then create role ${ident(name)} login; end if;
end $$`;

/**
 * SQL that a database administrator runs once per service (idempotent, safe to run again; the
 * passwords are set apart, e.g. `\password ROLE` in psql, so they never pass through a file): the
 * owner role with the schema, the runtime role with USAGE on that schema only and data rights on
 * its tables and sequences, present and future (default privileges of the owner, so a migration's
 * new table is usable at once), each with a connection limit. Neither role reaches another schema;
 * neither creates in `public` (Postgres 15 denies that by default: on older servers, revoke CREATE
 * on it from PUBLIC once).
 */
export function schemaRoleStatements(roles: SchemaRoles, limits: ConnectionLimits = DEFAULT_CONNECTION_LIMITS): string[] {
  const { schema, owner, runtime } = roles;
  return [
    createRole(owner),
    createRole(runtime),
    `alter role ${ident(owner)} connection limit ${limits.owner}`,
    `alter role ${ident(runtime)} connection limit ${limits.runtime}`,
    `create schema if not exists ${ident(schema)} authorization ${ident(owner)}`,
    `alter schema ${ident(schema)} owner to ${ident(owner)}`,
    `revoke all on schema ${ident(schema)} from public`,
    `grant usage on schema ${ident(schema)} to ${ident(runtime)}`,
    `grant select, insert, update, delete on all tables in schema ${ident(schema)} to ${ident(runtime)}`,
    `grant usage, select, update on all sequences in schema ${ident(schema)} to ${ident(runtime)}`,
    `alter default privileges for role ${ident(owner)} in schema ${ident(schema)} grant select, insert, update, delete on tables to ${ident(runtime)}`,
    `alter default privileges for role ${ident(owner)} in schema ${ident(schema)} grant usage, select, update on sequences to ${ident(runtime)}`,
    // The runtime role sets nothing: a long query is cut at the services' 30 s even through a pooler.
    `alter role ${ident(runtime)} set statement_timeout = '30s'`,
  ];
}

/**
 * The read-only role that audits the books and takes backups: USAGE and SELECT on every schema's
 * tables and sequences, present and future, and read-only transactions by default, so a mistaken
 * statement in its session changes nothing.
 */
export function auditorStatements(
  schemas: readonly SchemaRoles[],
  limits: ConnectionLimits = DEFAULT_CONNECTION_LIMITS,
  auditor = AUDITOR_ROLE,
): string[] {
  return [
    createRole(auditor),
    `alter role ${ident(auditor)} connection limit ${limits.auditor}`,
    `alter role ${ident(auditor)} set default_transaction_read_only = on`,
    ...schemas.flatMap(({ schema, owner }) => [
      `grant usage on schema ${ident(schema)} to ${ident(auditor)}`,
      `grant select on all tables in schema ${ident(schema)} to ${ident(auditor)}`,
      `grant select on all sequences in schema ${ident(schema)} to ${ident(auditor)}`,
      `alter default privileges for role ${ident(owner)} in schema ${ident(schema)} grant select on tables to ${ident(auditor)}`,
      `alter default privileges for role ${ident(owner)} in schema ${ident(schema)} grant select on sequences to ${ident(auditor)}`,
    ]),
  ];
}

/**
 * Keeps `roles` to the database the statements run in: every other database of the server stops
 * granting CONNECT to PUBLIC (Postgres grants it by default, so a runtime role could otherwise
 * open sessions on any of them), and this one grants it to `roles` by name. Meant for a server
 * that serves this system alone: other applications' roles lose CONNECT on those databases too
 * unless granted it by name.
 */
export function connectStatements(roles: readonly string[]): string[] {
  return [
    `do $$ declare d text; begin
  for d in select datname from pg_database where datallowconn and datname <> current_database() loop
    execute format('revoke connect on database %I from public', d);
  end loop;
end $$`,
    `do $$ begin
  execute format('revoke connect on database %I from public', current_database());
  execute format('grant connect on database %I to ${roles.map((r) => ident(r).replace(/'/g, "''")).join(', ')}', current_database());
end $$`,
  ];
}

/** Host, port and database a connection URL names, whoever connects: two URLs with the same key reach the same database. */
export function databaseKey(url: string): string {
  const parsed = new URL(url);
  const host = (parsed.searchParams.get('host') ?? parsed.hostname).replace(/^\[|\]$/g, '').toLowerCase();
  const port = parsed.port || parsed.searchParams.get('port') || '5432';
  return `${host}:${port}/${decodeURIComponent(parsed.pathname.slice(1))}`;
}

/**
 * The schemas among `schemas` that live in the database `server` names (its host, port and
 * database; the user does not matter): each schema's database is `DATABASE_URL_<SCHEMA>` of `env`,
 * else its `DATABASE_URL`, as the services and the audit place them. Throws when `env` does not
 * say where the schemas live.
 */
export function schemasOnServer(schemas: readonly string[], server: string, env: Readonly<Record<string, string | undefined>>): string[] {
  const target = databaseKey(server);
  return schemas.filter((schema) => {
    const url = env[`DATABASE_URL_${schema.toUpperCase()}`] ?? env.DATABASE_URL;
    if (!url)
      throw new Error(`where ${schema} lives is unknown: set DATABASE_URL (and DATABASE_URL_<SCHEMA> for a schema on another server)`);
    return databaseKey(url) === target;
  });
}
