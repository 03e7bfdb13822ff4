import { z } from 'zod';
import { Branch, Channel, Customer, CustomersListQuery, DocumentType, inventorySubjects, salesApiSubjects } from '@erp/contracts';
import { defineRoute } from '../route';

const FOR_SALES = 'Solo los activos: los que `POST /sales` acepta.';

/** What a partner needs to write a sale: the ids of branches, warehouses, document types, channels and customers. */
export const lookupsRoutes = [
  defineRoute({
    method: 'get',
    path: '/branches',
    summary: 'Las sucursales activas de la empresa con sus bodegas activas (`id_sucursal` e `id_bodega` de una venta)',
    description: `${FOR_SALES} Ordenadas por nombre; las bodegas de cada sucursal también.`,
    response: { kind: 'single', schema: z.array(Branch) },
    handle: async (_input, { bus, ctx }) => ({ data: await bus.request(inventorySubjects, 'inventory.sucursal.list', {}, ctx) }),
  }),
  defineRoute({
    method: 'get',
    path: '/document-types',
    summary: 'Los tipos de documento activos de la empresa (`id_documento` de una venta), cada uno de una sucursal',
    description: `${FOR_SALES} Una venta usa un tipo de documento de su sucursal; los de \`solo_cotizacion\` solo sirven para cotizaciones.`,
    response: { kind: 'single', schema: z.array(DocumentType) },
    handle: async (_input, { bus, ctx }) => ({ data: await bus.request(salesApiSubjects, 'sales.documento.list', {}, ctx) }),
  }),
  defineRoute({
    method: 'get',
    path: '/channels',
    summary: 'Los canales de venta activos de la empresa (`id_canal` de una venta)',
    description: `${FOR_SALES} Ordenados por nombre.`,
    response: { kind: 'single', schema: z.array(Channel) },
    handle: async (_input, { bus, ctx }) => ({ data: await bus.request(salesApiSubjects, 'sales.canal.list', {}, ctx) }),
  }),
  defineRoute({
    method: 'get',
    path: '/customers',
    summary: 'Los clientes activos de la empresa (`id_cliente` de una venta): por email o por nombre o documento, paginados',
    description: [
      FOR_SALES,
      '- `email`: el email exacto, sin distinguir mayúsculas.',
      '- `q`: parte del nombre o del número de documento, sin distinguir mayúsculas.',
      '- Orden: `nombre` y, a igual nombre, `id`.',
    ].join('\n'),
    query: CustomersListQuery,
    response: { kind: 'list', schema: Customer },
    handle: async ({ query }, { bus, ctx }) => {
      const page = await bus.request(salesApiSubjects, 'sales.cliente.list', query, ctx);
      return { data: page.items, pagination: page.pagination, filters_applied: page.filters_applied };
    },
  }),
];
