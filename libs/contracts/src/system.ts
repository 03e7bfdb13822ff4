import { z } from 'zod';
import { DATE_JSON_SCHEMA, DateString } from './fields';
import { documentAs } from './http';

const QuotaDate = (other: string) =>
  documentAs(DateString, {
    ...DATE_JSON_SCHEMA,
    description: `Con \`${other}\`: la llamada cuenta como una solicitud con filtros de fecha.`,
  }).optional();

/**
 * Query of `GET /system/rate-limit`: none but the date filters, which make the call count (and
 * report) as a request with both, under the higher limit; anything else is refused by name.
 */
export const RateLimitQuery = z.strictObject({
  fecha_inicio: QuotaDate('fecha_fin'),
  fecha_fin: QuotaDate('fecha_inicio'),
});

/** `data` of `GET /system/rate-limit`: the API key's quota in the current UTC hour. */
export const RateLimitStatus = z.object({
  requests_used: z.number().int(),
  max_requests: z.number().int(),
  remaining_requests: z.number().int(),
  /** Top of the next hour, ISO 8601 UTC. */
  reset_time: z.iso.datetime(),
  window_minutes: z.number().int(),
  limits: z.object({ standard: z.number().int(), with_date_filters: z.number().int() }),
  current_limit_type: z.enum(['standard', 'with_date_filters']),
  empresa_id: z.number().int(),
  empresa_nombre: z.string(),
});
export type RateLimitStatus = z.output<typeof RateLimitStatus>;
