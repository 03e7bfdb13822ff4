// What the tests and the benchmark use of the admin: the fixture loader (fixtures/), the schema clients and the audit (audit/).
// The CLI and the launcher (cli.ts, start.ts) are its entries and export nothing.
export { seedFixture, type SeedOutput, type SeededEmpresa, type WebhookToken } from './fixtures/seed';
export { SchemaClients, type DatabaseUrls, type Query, type Row } from './schema-clients';
export { auditBooks, formatInvariants } from './audit/audit-books';
export type { AuditOptions, InvariantResult } from './audit/check';
