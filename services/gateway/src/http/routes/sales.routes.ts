import { SaleCreateBody, SaleIdParam, SalesListQuery, SalesSummaryQuery, salesApiSubjects, salesFiltersApplied } from '@erp/contracts';
import { defineRoute } from '../route';

export const salesRoutes = [
  defineRoute({
    method: 'get',
    path: '/sales',
    summary: 'Ventas con sus líneas: filtros por fecha y estado, orden y paginación',
    query: SalesListQuery,
    handle: async ({ query }, { bus, ctx }) => {
      const page = await bus.request(salesApiSubjects, 'sales.sale.list', query, ctx);
      return { data: page.items, pagination: page.pagination, filters_applied: page.filters_applied };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/sales/summary',
    summary: 'Resumen de ventas: cantidad, totales, promedio y desglose por estado',
    query: SalesSummaryQuery,
    handle: async ({ query }, { bus, ctx }) => ({
      data: await bus.request(salesApiSubjects, 'sales.summary', query, ctx),
      filters_applied: salesFiltersApplied(query),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/sales/:id',
    summary: 'Una venta con sus líneas',
    params: SaleIdParam,
    handle: async ({ params }, { bus, ctx }) => ({
      data: await bus.request(salesApiSubjects, 'sales.sale.get', { id: params.id }, ctx),
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/sales',
    summary: 'Crea una venta o cotización con el mismo proceso de facturación que la aplicación (idempotente por referencia_externa)',
    body: SaleCreateBody,
    handle: async ({ body }, { bus, ctx }) => {
      const { venta, idempotent } = await bus.request(salesApiSubjects, 'sales.create', { ...body, origen: 'api' }, ctx);
      return { status: idempotent ? 200 : 201, data: venta, idempotent };
    },
  }),
];
