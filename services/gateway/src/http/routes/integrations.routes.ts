import { z } from 'zod';
import { IntegracionEstado, webhookApiSubjects } from '@erp/contracts';
import { defineRoute } from '../route';

export const integrationsRoutes = [
  defineRoute({
    method: 'get',
    path: '/integrations',
    summary: 'Las integraciones de tiendas de la empresa: su suscripción de webhooks, su conciliación y los webhooks que no llegaron',
    description: [
      '- Solo lectura; nunca muestra tokens, secretos ni credenciales de la tienda.',
      '- `conciliacion`: la última pasada contra la API de la tienda (cada `PLATFORM_RECONCILE_INTERVAL_MS`), su resultado y los pedidos que trajo antes que su webhook.',
      '- `webhooks_perdidos`: de los pedidos de los últimos `dias` días, cuántos llegaron primero por conciliación (su webhook se perdió o aún no llegaba).',
    ].join('\n'),
    response: { kind: 'single', schema: z.array(IntegracionEstado) },
    handle: async (_input, { bus, ctx }) => ({
      data: await bus.request(webhookApiSubjects, 'webhooks.integration.list', {}, ctx),
    }),
  }),
];
