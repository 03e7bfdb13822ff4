import express, { type RequestHandler } from 'express';
import { isAppError, webhookSubjects, type Plataforma, type RecursoWebhook } from '@erp/contracts';
import type { Bus, Logger } from '@erp/bus';
import { MESSAGES, appErrorAnswer, sendEnvelope, sendError } from './errors';

/** Headers a delivery keeps: the platforms' own (topic, signature, ids) and the content type. */
function relevantHeaders(headers: express.Request['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    if (name.startsWith('x-wc-') || name.startsWith('x-shopify-') || name === 'content-type' || name === 'user-agent') {
      out[name] = Array.isArray(value) ? value.join(', ') : value;
    }
  }
  return out;
}

/** The inbound webhook endpoints, below `WEBHOOK_BASE`; the router and the API reference both derive from this list. */
export const WEBHOOK_ROUTES: ReadonlyArray<{ path: string; plataforma: Plataforma; recurso: RecursoWebhook; summary: string }> = [
  {
    path: '/woocommerce/:token',
    plataforma: 'woocommerce',
    recurso: 'pedido',
    summary: 'Pedido de la plataforma A (WooCommerce): se convierte en venta y mueve el stock',
  },
  {
    path: '/woocommerce/:token/producto',
    plataforma: 'woocommerce',
    recurso: 'producto',
    summary: 'Producto de la plataforma A (WooCommerce): actualiza el catálogo y el stock',
  },
  {
    path: '/shopify/:token',
    plataforma: 'shopify',
    recurso: 'pedido',
    summary: 'Pedido de la plataforma B (Shopify): se convierte en venta y mueve el stock',
  },
];

/**
 * Inbound platform webhooks: no API key and no quota; the integration token is in the path. The
 * body is taken raw (any content type: WooCommerce pings with a form body) because signatures are
 * computed over its exact bytes, and handed to webhook-ingest, which stores it before we answer.
 */
export function webhookRouter(deps: { bus: Bus; logger: Logger }): express.Router {
  const router = express.Router({ strict: false });
  const raw = express.raw({ type: () => true, limit: '1mb' });
  const receive =
    (plataforma: Plataforma, recurso: RecursoWebhook): RequestHandler =>
    async (req, res) => {
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const requestId = String(res.getHeader('X-Request-Id') ?? '');
      try {
        const reply = await deps.bus.request(
          webhookSubjects,
          'webhooks.receive',
          {
            plataforma,
            recurso,
            token: String(req.params.token),
            headers: relevantHeaders(req.headers),
            cuerpo_base64: body.toString('base64'),
          },
          { requestId },
        );
        res.status(200).json({ success: true, estado: reply.estado, id_entrega: reply.id_entrega });
      } catch (err) {
        if (!isAppError(err)) throw err;
        const { status, body: answer } = appErrorAnswer(err);
        if (status >= 500) deps.logger.warn({ requestId, code: err.code, err }, err.message);
        const { details: _details, ...withoutDetails } = answer;
        void _details;
        sendEnvelope(res, status, status === 401 ? withoutDetails : answer);
      }
    };
  for (const { path, plataforma, recurso } of WEBHOOK_ROUTES) router.post(path, raw, receive(plataforma, recurso));
  for (const { path } of WEBHOOK_ROUTES) {
    router.all(path, (_req, res) => {
      res.setHeader('Allow', 'POST');
      sendError(res, 405, 'metodo_no_admitido', MESSAGES.methodNotAllowed);
    });
  }
  return router;
}
