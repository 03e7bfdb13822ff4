/** The two Postgres roles of one service's schema. */
export interface SchemaRoles {
  schema: string;
  /** Owns the schema and everything in it; the migration Job connects as this role. */
  owner: string;
  /** What the running service connects as: data rights on its own schema's tables, nothing else. */
  runtime: string;
}

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;
const literal = (value: string) => `'${value.replace(/'/g, "''")}'`;

/**
 * SQL that a database administrator runs once per service (idempotent, safe to run again; the
 * passwords are set apart, e.g. `\password ROLE` in psql, so they never pass through a file): the
 * owner role with the schema, the runtime role with USAGE on that schema only and data rights on
 * its tables and sequences, present and future (default privileges of the owner, so a migration's
 * new table is usable at once). Neither role reaches another schema; neither creates in `public`
 * (Postgres 15 denies that by default: on older servers, revoke CREATE on it from PUBLIC once).
 */
export function schemaRoleStatements(roles: SchemaRoles): string[] {
  const { schema, owner, runtime } = roles;
  const createRole = (name: string) =>
    `do $$ begin
  if not exists (select 1 from pg_roles where rolname = ${literal(name)}) then create role ${ident(name)} login; end if;
end $$`;
  return [
    createRole(owner),
    createRole(runtime),
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
