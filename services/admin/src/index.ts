export * from './seed';
export * from './connect';
export { auditBooks, formatInvariants } from './audit/audit-books';
export type { AuditOptions, InvariantResult } from './audit/check';
export * from './schema-clients';
