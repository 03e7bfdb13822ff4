import { schemaRoleStatements } from './roles';

/**
 * Prints the SQL that provisions the owner and runtime roles of each schema named on the command
 * line (`erp_<schema>_owner`, `erp_<schema>`), for a database administrator to run with psql.
 * Passwords are set apart (`\password ROLE` in psql), so they never pass through a file.
 */
if (require.main === module) {
  const schemas = process.argv.slice(2);
  if (schemas.length === 0) {
    console.error('usage: npm run db:roles -- SCHEMA...   (e.g. gateway sales inventory returns packages webhook_ingest subscriptions)');
    process.exit(2);
  }
  for (const schema of schemas) {
    console.log(`-- ${schema}`);
    for (const statement of schemaRoleStatements({ schema, owner: `erp_${schema}_owner`, runtime: `erp_${schema}` }))
      console.log(`${statement};`);
  }
}
