import { AppError } from '@erp/contracts';

/** A delivery that can never succeed as it is: kept as failed with this reason until replayed. */
export class Unprocessable extends Error {
  override readonly name = 'Unprocessable';
}

/** Errors of other services that retrying cannot fix. */
export function isPermanent(err: unknown): boolean {
  if (err instanceof Unprocessable) return true;
  return err instanceof AppError && !['UNAVAILABLE', 'TIMEOUT', 'INTERNAL'].includes(err.code);
}

/** A failure reason for people: the message, and the details of a validation error. */
export function reasonOf(err: unknown): string {
  if (err instanceof AppError && err.details) {
    const details = Object.entries(err.details)
      .map(([field, messages]) => `${field}: ${messages.join(', ')}`)
      .join('; ');
    return `${err.message} (${details})`.slice(0, 2000);
  }
  return (err instanceof Error ? err.message : String(err)).slice(0, 2000);
}
