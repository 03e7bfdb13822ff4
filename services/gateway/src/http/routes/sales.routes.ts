import { Sale, SaleCreateBody, SaleIdParam, SalesListQuery, SalesSummary, SalesSummaryQuery, salesApiSubjects, salesFiltersApplied } from '@erp/contracts';
import { defineRoute } from '../route';

export const salesRoutes = [
  defineRoute({
    method: 'get',
    path: '/sales',
    summary: 'Ventas con sus líneas: filtros por fecha y estado, orden y paginación',
    query: SalesListQuery,
    response: { kind: 'list', schema: Sale },
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
    response: { kind: 'single', schema: SalesSummary },
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
    response: { kind: 'single', schema: Sale },
    handle: async ({ params }, { bus, ctx }) => ({
      data: await bus.request(salesApiSubjects, 'sales.sale.get', { id: params.id }, ctx),
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/sales',
    summary: 'Crea una venta o cotización con el mismo proceso de facturación que la aplicación (idempotente por referencia_externa)',
    description: [
      'Reglas entre campos (422 con `details` cuando no se cumplen; nada cambia):',
      '- `id_sucursal` o `sucursal` (nombre de una sucursal activa).',
      '- `id_canal` es obligatorio salvo con `estado` `Cotizacion`; `id_cliente`, con `estado` `Pendiente`.',
      '- Cada línea lleva `id_producto` o `codigo_producto` (código o SKU); `precio` incluye impuestos y por omisión es el del producto.',
      '- `referencia` es un alias de `referencia_externa`. Si la empresa ya tiene una venta con esa referencia, se devuelve esa venta con 200 y `meta.idempotent: true`.',
      '- `Pagada` se guarda como `Completada` con `monto_pago` igual al total por omisión; `Cotizacion` no mueve stock.',
      '',
      'Cuando responde, el stock ya está descontado en `GET /inventory`.',
    ].join('\n'),
    body: SaleCreateBody,
    response: {
      kind: 'single',
      schema: Sale,
      statuses: { 201: 'Venta creada', 200: 'La referencia_externa ya existía: la venta existente, sin crear otra' },
      idempotent: true,
    },
    handle: async ({ body }, { bus, ctx }) => {
      const { venta, idempotent } = await bus.request(salesApiSubjects, 'sales.create', { ...body, origen: 'api' }, ctx);
      return { status: idempotent ? 200 : 201, data: venta, idempotent };
    },
  }),
];
