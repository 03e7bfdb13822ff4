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
  // Collected in a Map: a sender's key such as `__proto__` must become a field like any other,
  // not reach an object's prototype.
  const details = new Map<string, string[]>();
  const add = (key: string, message: string) => details.set(key, [...(details.get(key) ?? []), message]);
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) add([...issue.path, key].map(String).join('.'), unknownKey);
      continue;
    }
    add(issue.path.length > 0 ? issue.path.map(String).join('.') : '_', issue.message);
  }
  return Object.fromEntries(details);
}

/** Whether some of the issues are keys a strict object does not know. */
export function hasUnknownKeys(error: z.ZodError): boolean {
  return error.issues.some((issue) => issue.code === 'unrecognized_keys');
}
