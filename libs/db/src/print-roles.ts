import {
  AUDITOR_ROLE,
  DEFAULT_CONNECTION_LIMITS,
  auditorStatements,
  connectStatements,
  schemaRoleStatements,
  schemasOnServer,
  type SchemaRoles,
} from './roles';

const USAGE = `usage: npm run db:roles -- [--connection-limit N] [--server URL [--list]] SCHEMA...
  (e.g. gateway sales inventory returns packages webhook_ingest subscriptions exports)
  --connection-limit N  connections each runtime role may hold (default ${DEFAULT_CONNECTION_LIMITS.runtime}: the pooler's pool size per user)
  --server URL  only the schemas that live in URL's database (host, port and database; not its user),
                each where DATABASE_URL_<SCHEMA> says, else DATABASE_URL
  --list        the names of those schemas, one a line, instead of the SQL`;

/**
 * Prints the SQL that provisions the owner and runtime roles of each schema named on the command
 * line (`erp_<schema>_owner`, `erp_<schema>`), the read-only `auditor`, and CONNECT on this
 * database only, for a database administrator to run with psql against the system's database.
 * `--connection-limit` is each runtime role's limit (its pooler's pool size per user). With
 * `--server`, only what that server needs: the roles of the schemas that live there (by
 * `DATABASE_URL_<SCHEMA>`, else `DATABASE_URL`) and the auditor's grants on them. Passwords are
 * set apart (`\password ROLE` in psql), so they never pass through a file.
 */
if (require.main === module) {
  const args = process.argv.slice(2);
  const fail = (message: string) => {
    console.error(`${message}\n${USAGE}`);
    process.exit(2);
  };
  const limits = { ...DEFAULT_CONNECTION_LIMITS };
  const option = (name: string): string | undefined => {
    const at = args.indexOf(name);
    if (at < 0) return undefined;
    const value = args[at + 1];
    if (value === undefined) fail(`${name} needs a value`);
    args.splice(at, 2);
    return value;
  };
  const limit = option('--connection-limit');
  if (limit !== undefined) {
    const value = Number(limit);
    if (!Number.isInteger(value) || value < 1) fail(`--connection-limit takes a whole number of connections, not "${limit}"`);
    limits.runtime = value;
  }
  const server = option('--server');
  const listAt = args.indexOf('--list');
  const list = listAt >= 0;
  if (list) args.splice(listAt, 1);
  if (list && server === undefined) fail('--list goes with --server');
  const unknown = args.filter((a) => !/^[a-z_][a-z0-9_]*$/.test(a));
  if (args.length === 0 || unknown.length > 0) fail(unknown.length > 0 ? `not a schema name: ${unknown.join(', ')}` : 'no schema named');

  let names = args;
  if (server !== undefined) {
    try {
      names = schemasOnServer(args, server, process.env);
    } catch (err) {
      fail((err as Error).message);
    }
    if (names.length === 0) fail(`none of ${args.join(', ')} lives on ${server.replace(/\/\/[^@/]*@/, '//')}`);
  }
  if (list) {
    for (const schema of names) console.log(schema);
  } else {
    const schemas: SchemaRoles[] = names.map((schema) => ({ schema, owner: `erp_${schema}_owner`, runtime: `erp_${schema}` }));
    const print = (title: string, statements: string[]) => {
      console.log(`-- ${title}`);
      for (const statement of statements) console.log(`${statement};`);
    };
    for (const roles of schemas) print(roles.schema, schemaRoleStatements(roles, limits));
    print(AUDITOR_ROLE, auditorStatements(schemas, limits));
    print('connect', connectStatements([...schemas.flatMap((r) => [r.owner, r.runtime]), AUDITOR_ROLE]));
  }
}
