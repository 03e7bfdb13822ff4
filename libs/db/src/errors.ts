import { AppError } from '@erp/contracts';

export type PgErrorKind =
  | 'unique_violation'
  | 'foreign_key_violation'
  | 'check_violation'
  | 'not_null_violation'
  | 'invalid_data'
  | 'serialization_failure'
  | 'deadlock'
  | 'unavailable';

interface PgLikeError {
  code?: string;
  constraint?: string;
}

const UNAVAILABLE_NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND']);

/** Classifies a pg error by SQLSTATE (or a socket error) into the kinds the domain cares about. */
export function pgErrorKind(err: unknown): PgErrorKind | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  // Other libraries' errors carry codes of their own, numbers among them (a JetStream API error's
  // 503): only a string can be a SQLSTATE or a socket error's name.
  const raw: unknown = (err as { code?: unknown }).code;
  const code = typeof raw === 'string' ? raw : undefined;
  if (!code) {
    // pg's own errors for a connection that is gone, or was never made, carry no code.
    return /Connection terminated|timeout exceeded when trying to connect|is not queryable|Query read timeout/i.test(
      String((err as Error).message),
    )
      ? 'unavailable'
      : undefined;
  }
  if (code === '23505') return 'unique_violation';
  if (code === '23503') return 'foreign_key_violation';
  if (code === '23514') return 'check_violation';
  if (code === '23502') return 'not_null_violation';
  // Class 22, data exception: a value Postgres cannot take (a NUL in text, a number out of range).
  if (code.startsWith('22')) return 'invalid_data';
  if (code === '40001') return 'serialization_failure';
  if (code === '40P01') return 'deadlock';
  if (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300') return 'unavailable';
  // A write that reached a server which is no longer the primary (a connection made before a
  // failover, to the node that is now a standby): the primary is elsewhere, the write can be retried.
  if (code === '25006') return 'unavailable';
  if (UNAVAILABLE_NODE_CODES.has(code)) return 'unavailable';
  return undefined;
}

/** Name of the violated constraint, when Postgres reported one. */
export function pgConstraint(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null ? (err as PgLikeError).constraint : undefined;
}

export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  return pgErrorKind(err) === 'unique_violation' && (constraint === undefined || pgConstraint(err) === constraint);
}

/**
 * Translates a database error into an AppError the gateway can answer with. Errors that are not
 * database errors are returned untouched so the caller's own handling (or the 500 path) applies.
 */
export function translatePgError(err: unknown): unknown {
  switch (pgErrorKind(err)) {
    case 'unique_violation':
      return new AppError('CONFLICT', 'El registro ya existe', undefined, { cause: err });
    case 'foreign_key_violation':
    case 'check_violation':
    case 'not_null_violation':
      return new AppError('VALIDATION_FAILED', 'Los datos no cumplen las reglas de la base de datos', undefined, { cause: err });
    case 'invalid_data':
      return new AppError('VALIDATION_FAILED', 'Los datos contienen un valor que la base de datos no admite', undefined, { cause: err });
    case 'unavailable':
      return new AppError('UNAVAILABLE', 'Base de datos no disponible', undefined, { cause: err });
    default:
      return err;
  }
}
