import { IdParam, InventoryListQuery, InventorySummary, ListPagination, Product, inventorySubjects } from '@erp/contracts';
import { defineRoute } from '../route';

export const inventoryRoutes = [
  defineRoute({
    method: 'get',
    path: '/inventory',
    summary: 'Productos con su stock por bodega: filtros, orden y paginación',
    query: InventoryListQuery,
    response: { kind: 'list', schema: Product, pagination: ListPagination },
    handle: async ({ query }, { bus, ctx }) => {
      const { page, items } = await bus.requestJsonPage(inventorySubjects, 'inventory.product.list', query, ctx);
      return { data: items, pagination: page.pagination, filters_applied: page.filters_applied };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/inventory/summary',
    summary: 'Resumen del inventario: productos, stock, valor y categorías',
    response: { kind: 'single', schema: InventorySummary },
    handle: async (_input, { bus, ctx }) => ({
      data: await bus.request(inventorySubjects, 'inventory.summary', {}, ctx),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/inventory/:id',
    summary: 'Un producto con su stock por bodega',
    params: IdParam,
    response: { kind: 'single', schema: Product },
    handle: async ({ params }, { bus, ctx }) => ({
      data: await bus.requestJson(inventorySubjects, 'inventory.product.get', { id: params.id }, ctx),
    }),
  }),
];
