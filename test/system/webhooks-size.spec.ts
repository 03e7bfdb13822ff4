import type { SeedOutput, WebhookToken } from '@erp/back-office';
import { Stack, json } from '../support/stack';
import { deliver } from '../support/webhook-fixture';
import { wooHeaders } from '../../services/webhook-ingest/test/platform.factories';

describe('webhook bodies the internal bus cannot carry', () => {
  let stack: Stack;
  let seeded: SeedOutput;

  beforeAll(async () => {
    stack = await Stack.start({ services: ['gateway', 'inventory', 'webhook-ingest'] });
    seeded = await stack.seed({
      empresas: [
        {
          ref: 'tienda',
          nombre: 'Tienda Grande S.A.',
          usuarios: [{ ref: 'admin', nombre: 'Admin', rol: 'Administrador' }],
          sucursales: [{ ref: 'centro', nombre: 'Sucursal Centro', bodegas: [{ ref: 'principal', nombre: 'Bodega Principal' }] }],
          integraciones: [
            { ref: 'woo', plataforma: 'woocommerce', usuario: 'admin', sucursal: 'centro', bodega: 'principal', documento: 'factura' },
          ],
        },
      ],
    });
  });
  afterAll(() => stack.stop());

  it('answers 413 in the envelope to a body under 1 MB whose encoding exceeds NATS max_payload, and stores nothing', async () => {
    const { path } = (seeded.empresas.tienda!.integraciones as Record<string, WebhookToken>).woo!;
    // 900 KB of JSON: under the HTTP limit, about 1.2 MB once base64-encoded into the NATS request.
    const body = JSON.stringify({ id: 1, status: 'processing', customer_note: 'x'.repeat(900 * 1024) });
    const res = await deliver(stack.baseUrl, path, body, wooHeaders(body, 'order.created'));
    expect(res.status).toBe(413);
    expect(await json(res)).toEqual({
      success: false,
      error: 'El cuerpo de la solicitud es demasiado grande para procesarlo',
      code: 413,
      reason: 'cuerpo_demasiado_grande',
    });
    expect(await stack.query('select id from webhook_ingest.entregas')).toEqual([]);
  });
});
