import type { z } from 'zod';
import type { ErrorDetails } from './errors';

/** What `details` says of a body field the operation does not take. */
export const UNKNOWN_FIELD_MESSAGE = 'Campo desconocido';
/** What `details` says of a query parameter the operation does not take. */
export const UNKNOWN_PARAMETER_MESSAGE = 'Parámetro desconocido';

/**
 * Turns zod issues into the envelope's `details`: dotted path → messages (root issues under `_`).
 * A strict object's unknown keys become one entry each under their own path
 * (`detalles.0.cantida`), saying `unknownKey`.
 */
export function detailsFromZod(error: z.ZodError, unknownKey: string = UNKNOWN_FIELD_MESSAGE): ErrorDetails {
  const details: ErrorDetails = {};
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) (details[[...issue.path, key].map(String).join('.')] ??= []).push(unknownKey);
      continue;
    }
    const key = issue.path.length > 0 ? issue.path.map(String).join('.') : '_';
    (details[key] ??= []).push(issue.message);
  }
  return details;
}

/** Whether some of the issues are keys a strict object does not know. */
export function hasUnknownKeys(error: z.ZodError): boolean {
  return error.issues.some((issue) => issue.code === 'unrecognized_keys');
}
