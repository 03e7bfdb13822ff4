import { RateLimitQuery, RateLimitStatus } from '@erp/contracts';
import { defineRoute } from '../route';

export function systemRoutes(limits: { standard: number; withDateFilters: number }) {
  return [
    defineRoute({
      method: 'get',
      path: '/system/rate-limit',
      summary: 'Estado de la cuota horaria de la empresa, y los alcances y el vencimiento del API key (la llamada cuenta)',
      description:
        'Con `fecha_inicio` y `fecha_fin` la llamada cuenta como una solicitud con filtros de fecha y `current_limit_type` es `with_date_filters`.',
      query: RateLimitQuery,
      response: { kind: 'single', schema: RateLimitStatus },
      showsQuota: true,
      handle: async (_input, { rate, ctx, credential }) => ({
        data: {
          requests_used: rate.used,
          max_requests: rate.limit,
          remaining_requests: rate.remaining,
          reset_time: new Date(rate.window.reset * 1000).toISOString(),
          window_minutes: 60,
          limits: { standard: limits.standard, with_date_filters: limits.withDateFilters },
          current_limit_type: rate.limitType,
          empresa_id: ctx.empresa.id,
          empresa_nombre: ctx.empresa.nombre,
          alcances: [...credential.alcances],
          expira_el: credential.expiraEl?.toISOString() ?? null,
        } satisfies RateLimitStatus,
      }),
    }),
  ];
}
