import {
  ListPagination,
  Return,
  ReturnIdParam,
  ReturnsListQuery,
  ReturnsSummary,
  ReturnsSummaryQuery,
  returnsApiSubjects,
  returnsFiltersApplied,
} from '@erp/contracts';
import { defineRoute } from '../route';

export const returnsRoutes = [
  defineRoute({
    method: 'get',
    path: '/returns',
    summary: 'Devoluciones de ventas con sus líneas: filtros por fecha y por venta, de la más reciente a la más antigua, paginadas',
    description: [
      '- `fecha_inicio` y `fecha_fin` incluyen ambos extremos; se puede enviar una sola. `fecha_fin` anterior a `fecha_inicio` es 400.',
      '- `id_venta` deja solo las devoluciones de esa venta.',
      '- Orden: `fecha` descendente y, a igual fecha, `id` descendente.',
      '- `enable` es 1 y `estado` `Confirmada` mientras la devolución está activa; 0 y `Anulada` una vez anulada.',
    ].join('\n'),
    query: ReturnsListQuery,
    response: { kind: 'list', schema: Return, pagination: ListPagination },
    handle: async ({ query }, { bus, ctx }) => {
      const { page, items } = await bus.requestJsonPage(returnsApiSubjects, 'returns.return.list', query, ctx);
      return { data: items, pagination: page.pagination, filters_applied: page.filters_applied };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/returns/summary',
    summary: 'Resumen de las devoluciones activas: cantidad, totales, promedio y desglose por tipo',
    query: ReturnsSummaryQuery,
    response: { kind: 'single', schema: ReturnsSummary },
    handle: async ({ query }, { bus, ctx }) => ({
      data: await bus.request(returnsApiSubjects, 'returns.summary', query, ctx),
      filters_applied: returnsFiltersApplied(query),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/returns/:id',
    summary: 'Una devolución con sus líneas',
    params: ReturnIdParam,
    response: { kind: 'single', schema: Return },
    handle: async ({ params }, { bus, ctx }) => ({
      data: await bus.requestJson(returnsApiSubjects, 'returns.return.get', { id: params.id }, ctx),
    }),
  }),
];
