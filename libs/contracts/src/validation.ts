import type { z } from 'zod';
import type { ErrorDetails } from './errors';

/** Turns zod issues into the envelope's `details`: dotted path → messages (root issues under `_`). */
export function detailsFromZod(error: z.ZodError): ErrorDetails {
  const details: ErrorDetails = {};
  for (const issue of error.issues) {
    const key = issue.path.length > 0 ? issue.path.map(String).join('.') : '_';
    (details[key] ??= []).push(issue.message);
  }
  return details;
}
