import {
  ListPagination,
  MAX_SALES_PER_BATCH,
  Sale,
  SaleBatchBody,
  SaleBatchData,
  SaleBatchDocumentedBody,
  SaleCreateBody,
  SaleIdParam,
  SaleUpdateBody,
  SalesListQuery,
  SalesSummary,
  SalesSummaryQuery,
  salesApiSubjects,
  salesFiltersApplied,
} from '@erp/contracts';
import { createSalesBatch } from '../../flows/create-sales-batch.flow';
import { defineRoute } from '../route';

export const salesRoutes = [
  defineRoute({
    method: 'get',
    path: '/sales',
    summary: 'Ventas con sus líneas: filtros por fecha y estado, orden y paginación',
    query: SalesListQuery,
    response: { kind: 'list', schema: Sale, pagination: ListPagination },
    handle: async ({ query }, { bus, ctx }) => {
      const { page, items } = await bus.requestJsonPage(salesApiSubjects, 'sales.sale.list', query, ctx);
      return { data: items, pagination: page.pagination, filters_applied: page.filters_applied, version: page.version };
    },
    version: async ({ query }, { bus, ctx }) => (await bus.request(salesApiSubjects, 'sales.sale.version', query, ctx)).version,
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
      data: await bus.requestJson(salesApiSubjects, 'sales.sale.get', { id: params.id }, ctx),
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
      '- `referencia` es un alias de `referencia_externa`. Si la empresa ya tiene una venta con esa referencia creada con el mismo cuerpo (comparado campo a campo, sin importar el orden de las claves), se devuelve esa venta con 200 y `meta.idempotent: true`; con otro cuerpo, 409 con `details` que nombran la venta (`id_venta`, `correlativo`) y nada cambia. Las ventas guardadas antes de la versión 1.6.0 responden 200 a cualquier reintento.',
      '- `Pagada` se guarda como `Completada` con `monto_pago` igual al total por omisión; `Cotizacion` no mueve stock.',
      '',
      'Cuando responde, el stock ya está descontado en `GET /inventory`.',
    ].join('\n'),
    body: SaleCreateBody,
    response: {
      kind: 'single',
      schema: Sale,
      statuses: { 201: 'Venta creada', 200: 'La referencia_externa ya existía con el mismo cuerpo: la venta existente, sin crear otra' },
      idempotent: true,
    },
    errors: [409],
    handle: async ({ body }, { bus, ctx }) => {
      const { venta, idempotent } = await bus.request(salesApiSubjects, 'sales.create', { ...body, origen: 'api' }, ctx);
      return idempotent
        ? { status: 200, data: venta, idempotent }
        : { status: 201, data: venta, idempotent, location: `/sales/${venta.id}` };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/sales/batch',
    summary: `Crea hasta ${MAX_SALES_PER_BATCH} ventas en una solicitud: cada una como un POST /sales, con su resultado en el orden enviado`,
    description: [
      `\`ventas\` lleva de 1 a ${MAX_SALES_PER_BATCH} cuerpos de \`POST /sales\`, cada uno con su \`referencia_externa\`. Cuenta como una sola solicitud de la cuota.`,
      '- Cada venta se procesa sola y en orden, con las mismas reglas, respuestas e idempotencia que `POST /sales`: el stock y los correlativos quedan como si se hubieran enviado una por una. Una venta rechazada no impide las demás.',
      '- `resultados[i]` dice lo que `POST /sales` habría respondido a `ventas[i]`: `status` 201 con la venta creada en `data`, 200 si ya existía con ese cuerpo, o el estado y los campos del error (`error`, `code`, `details`) de esa venta sola (422 si no cumple las reglas, 409 si su referencia ya la usa otra venta con otro cuerpo…).',
      '- Reintentar el lote entero es seguro: las ventas ya hechas responden 200. Si el servicio de ventas deja de responder a mitad del lote, las ventas sin respuesta llevan 503 o 504 (pueden haberse aplicado o no) y el reintento las resuelve.',
      '- Un cuerpo que no es `{ventas: [...]}`, con 0 o más de 100 ventas, o una venta sin `referencia_externa`, es 400 con `details` que nombran la venta (`ventas.3.referencia_externa`); no se crea nada.',
    ].join('\n'),
    body: SaleBatchBody,
    documentedBody: SaleBatchDocumentedBody,
    bodyErrorStatus: 400,
    response: { kind: 'single', schema: SaleBatchData, statuses: { 200: 'Un resultado por venta, en el orden enviado' } },
    handle: async ({ body }, { bus, ctx }) => ({ data: await createSalesBatch(bus, body, ctx) }),
  }),
  defineRoute({
    method: 'put',
    path: '/sales/:id',
    summary: 'Modifica una venta Pendiente o una cotización: los campos omitidos conservan su valor y el stock se mueve por la diferencia',
    description: [
      'Solo ventas en estado `Pendiente` o `Cotizacion` (`Pre-venta` es una cotización) y sin documento fiscal emitido; si no, 422 con el motivo (anulada, estado que no se puede modificar, documento fiscal emitido). Un id que no existe en la empresa es 404; uno que no es entero, 400.',
      '- `detalles`, si se envía, reemplaza las líneas: una con el `id` de una línea de esta venta la modifica (lo que omite se conserva, y puede omitir el producto), una sin `id` se agrega, y las no enviadas se eliminan. Un `id` que no es de esta venta es 422.',
      '- Totales, impuestos y el documento de la venta se recalculan como al crearla; el `correlativo` no cambia.',
      '- El stock se mueve por la diferencia entre lo que la venta tenía y lo que tendrá, por producto y bodega: de 5 a 3 unidades devuelve 2; cambiar de bodega mueve toda la cantidad; convertir una cotización en `Completada`/`Pagada` descuenta su stock y volver a `Cotizacion` lo devuelve.',
      '- `Pendiente` requiere `id_cliente`, dentro de su límite de crédito; `id_canal` es obligatorio salvo en cotizaciones. `null` borra `id_cliente`, `fecha_expiracion`, `forma_pago`, `observaciones`, `monto_pago` y `cambio`.',
      '',
      'Cuando responde, el stock ya está movido en `GET /inventory`.',
    ].join('\n'),
    params: SaleIdParam,
    body: SaleUpdateBody,
    response: { kind: 'single', schema: Sale },
    handle: async ({ params, body }, { bus, ctx }) => ({
      data: await bus.request(salesApiSubjects, 'sales.update', { id: params.id, cambios: body }, ctx),
    }),
  }),
];
