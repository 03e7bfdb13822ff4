import { IdParam, inventorySubjects } from '@erp/contracts';
import { defineRoute } from '../route';

export const inventoryRoutes = [
  defineRoute({
    method: 'get',
    path: '/inventory/:id',
    summary: 'Un producto con su stock por bodega',
    params: IdParam,
    handle: async ({ params }, { bus, ctx }) => ({
      data: await bus.request(inventorySubjects, 'inventory.product.get', { id: params.id }, ctx),
    }),
  }),
];
