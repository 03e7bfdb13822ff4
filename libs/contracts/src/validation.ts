import type { z } from 'zod';
import type { ErrorDetails } from './errors';

/** What an unknown field of a strict body is told, under its own name. */
export const UNKNOWN_FIELD_MESSAGE = 'Campo desconocido: esta operación no lo admite';

/**
 * Turns zod issues into the envelope's `details`: dotted path → messages (root issues under `_`).
 * Each unknown field of a strict object gets its own entry, so the refusal names it.
 */
export function detailsFromZod(error: z.ZodError): ErrorDetails {
  const details: ErrorDetails = {};
  for (const issue of error.issues) {
    const keys = issue.code === 'unrecognized_keys' ? issue.keys.map((k) => [...issue.path, k]) : [issue.path];
    for (const path of keys) {
      const key = path.length > 0 ? path.map(String).join('.') : '_';
      (details[key] ??= []).push(issue.code === 'unrecognized_keys' ? UNKNOWN_FIELD_MESSAGE : issue.message);
    }
  }
  return details;
}
