// The back office's pieces, shared by the admin CLI, the npm start launcher, the tests and the benchmark:
// the fixture loader (fixtures/), the schema clients (one per service schema) and the audit of the books (audit/).
export { seedFixture, type SeedOutput, type SeededEmpresa, type WebhookToken } from './fixtures/seed';
export { SchemaClients, type DatabaseUrls, type Query, type Row } from './schema-clients';
export { auditBooks, formatInvariants } from './audit/audit-books';
export type { AuditOptions, InvariantResult } from './audit/check';
