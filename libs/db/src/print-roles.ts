import {
  AUDITOR_ROLE,
  DEFAULT_CONNECTION_LIMITS,
  auditorStatements,
  connectStatements,
  schemaRoleStatements,
  type SchemaRoles,
} from './roles';

const USAGE =
  'usage: npm run db:roles -- [--connection-limit N] SCHEMA...   (e.g. gateway sales inventory returns packages webhook_ingest subscriptions exports)';

/**
 * Prints the SQL that provisions the owner and runtime roles of each schema named on the command
 * line (`erp_<schema>_owner`, `erp_<schema>`), the read-only `auditor`, and CONNECT on this
 * database only, for a database administrator to run with psql against the system's database.
 * `--connection-limit` is each runtime role's limit (its pooler's pool size per user). Passwords
 * are set apart (`\password ROLE` in psql), so they never pass through a file.
 */
if (require.main === module) {
  const args = process.argv.slice(2);
  const limits = { ...DEFAULT_CONNECTION_LIMITS };
  const at = args.indexOf('--connection-limit');
  if (at >= 0) {
    const value = Number(args[at + 1]);
    if (!Number.isInteger(value) || value < 1) {
      console.error(`--connection-limit takes a whole number of connections, not "${args[at + 1] ?? ''}"\n${USAGE}`);
      process.exit(2);
    }
    limits.runtime = value;
    args.splice(at, 2);
  }
  const unknown = args.filter((a) => !/^[a-z_][a-z0-9_]*$/.test(a));
  if (args.length === 0 || unknown.length > 0) {
    console.error(unknown.length > 0 ? `not a schema name: ${unknown.join(', ')}\n${USAGE}` : USAGE);
    process.exit(2);
  }
  const schemas: SchemaRoles[] = args.map((schema) => ({ schema, owner: `erp_${schema}_owner`, runtime: `erp_${schema}` }));
  const print = (title: string, statements: string[]) => {
    console.log(`-- ${title}`);
    for (const statement of statements) console.log(`${statement};`);
  };
  for (const roles of schemas) print(roles.schema, schemaRoleStatements(roles, limits));
  print(AUDITOR_ROLE, auditorStatements(schemas, limits));
  print('connect', connectStatements([...schemas.flatMap((r) => [r.owner, r.runtime]), AUDITOR_ROLE]));
}
