import { z } from 'zod';
import { defineCatalog, defineEvents } from './catalog';
import { Id } from './fields';

/** Paths of the inbound webhooks start here (outside the partner API base, without API key or quota). */
export const WEBHOOK_BASE = '/api/webhook';

/** Platform A is WooCommerce, platform B is Shopify; the path segment is the platform's name. */
export const PLATAFORMAS = ['woocommerce', 'shopify'] as const;
export type Plataforma = (typeof PLATAFORMAS)[number];

/** How a platform order is named as its sale's `referencia_externa`: the platform's prefix, then the order's id. */
const PREFIJO_PEDIDO: Record<Plataforma, string> = { woocommerce: 'woo-', shopify: 'shop-' };

export function platformOrderReference(plataforma: Plataforma, idPedido: string): string {
  return `${PREFIJO_PEDIDO[plataforma]}${idPedido}`;
}

/** The platform's id of the order a sale's `referencia_externa` names (`woo-727` → `727`); undefined when it names none. */
export function platformOrderId(plataforma: Plataforma, referencia: string): string | undefined {
  const prefijo = PREFIJO_PEDIDO[plataforma];
  return referencia.startsWith(prefijo) && referencia.length > prefijo.length ? referencia.slice(prefijo.length) : undefined;
}

/** What a webhook path receives: orders (`/{token}`) or, for WooCommerce, products (`/{token}/producto`). */
export const RECURSOS_WEBHOOK = ['pedido', 'producto'] as const;
export type RecursoWebhook = (typeof RECURSOS_WEBHOOK)[number];

/**
 * A stored delivery: `recibida` waits for processing, `procesada` had its effect, `ignorada` needed
 * none (stale, cancelled before any sale, a topic we do not act on), `fallida` could not be
 * processed and keeps its reason until it is replayed.
 */
export const ESTADOS_ENTREGA = ['recibida', 'procesada', 'ignorada', 'fallida'] as const;
export type EstadoEntrega = (typeof ESTADOS_ENTREGA)[number];

/** The path a platform is given for an integration's token. */
export function webhookPath(plataforma: Plataforma, token: string): string {
  return `${WEBHOOK_BASE}/${plataforma}/${token}`;
}

/** Tokens travel in the URL path: URL-safe characters only. */
const Token = z.string().regex(/^[A-Za-z0-9_-]{16,200}$/, 'Debe tener entre 16 y 200 caracteres: letras, dígitos, _ o -');
const RefMap = z.record(z.string(), z.number().int());

const SeedIntegracion = z.object({
  ref: z.string().min(1),
  plataforma: z.enum(PLATAFORMAS),
  usuario: z.string().min(1),
  sucursal: z.string().min(1),
  bodega: z.string().min(1),
  documento: z.string().min(1),
  canal: z.string().min(1).optional(),
  /** The `Servicio` product that orders' shipping and fees are sold as; absent: the company's `ENVIO`, created on first use. */
  producto_envio: z.string().min(1).optional(),
  token: Token.optional(),
  /** Signing secret; null or absent: deliveries are not signed. */
  secreto: z.string().min(1).max(500).nullish(),
  activo: z.boolean().default(true),
});

export const IssuedToken = z.object({ id: z.number().int(), token: z.string(), path: z.string() });

export const EntregaResumen = z.object({
  id: z.number().int(),
  empresa_id: z.number().int(),
  id_integracion: z.number().int(),
  plataforma: z.enum(PLATAFORMAS),
  recurso: z.enum(RECURSOS_WEBHOOK),
  tema: z.string().nullable(),
  referencia: z.string().nullable(),
  estado: z.enum(ESTADOS_ENTREGA),
  motivo: z.string().nullable(),
  intentos: z.number().int(),
  id_venta: z.number().int().nullable(),
  recibida_at: z.string(),
  procesada_at: z.string().nullable(),
});
export type EntregaResumen = z.output<typeof EntregaResumen>;

/** Subjects of webhook-ingest. `webhooks.receive` is asked by the gateway; the rest are back office. */
export const webhookSubjects = defineCatalog({
  /**
   * One HTTP delivery as the gateway received it: the token of the path, the platform's headers
   * (lower-case names) and the raw body in base64, untouched, because signatures are computed over
   * the exact bytes. Answers once the delivery is stored (or recognised as a duplicate, a ping or
   * a topic that needs nothing). Unknown or disabled token, bad or missing signature: UNAUTHORIZED.
   */
  'webhooks.receive': {
    tenant: false,
    errors: ['UNAUTHORIZED', 'VALIDATION_FAILED'],
    request: z.object({
      plataforma: z.enum(PLATAFORMAS),
      recurso: z.enum(RECURSOS_WEBHOOK),
      token: z.string().min(1).max(500),
      headers: z.record(z.string(), z.string()),
      cuerpo_base64: z.string().max(2_000_000),
    }),
    reply: z.object({
      estado: z.enum(['recibida', 'duplicada', 'ping', 'ignorada']),
      id_entrega: z.number().int().nullable(),
    }),
  },
  /** Loads a company's integrations; refs point into the maps the other services' seeding returned. */
  'webhooks.admin.seed': {
    tenant: false,
    errors: ['VALIDATION_FAILED'],
    request: z.object({
      empresa_id: Id,
      refs: z.record(z.string(), RefMap),
      integraciones: z.array(SeedIntegracion).default([]),
    }),
    /** Tokens in clear: the only time they are shown. */
    reply: z.object({ integraciones: z.record(z.string(), IssuedToken) }),
  },
  'webhooks.admin.delivery.list': {
    tenant: false,
    errors: [],
    request: z.object({
      estado: z.enum(ESTADOS_ENTREGA).default('fallida'),
      empresa_id: Id.optional(),
      limit: z.number().int().min(1).max(1000).default(100),
    }),
    reply: z.array(EntregaResumen),
  },
  /**
   * Puts failed deliveries back to processing: the ones named, or every failed one (of a company
   * when given). Deliveries that are not failed are left alone.
   */
  'webhooks.admin.delivery.replay': {
    tenant: false,
    errors: ['VALIDATION_FAILED'],
    request: z.object({ ids: z.array(Id).max(1000).optional(), empresa_id: Id.optional() }),
    reply: z.object({ reencoladas: z.array(z.number().int()) }),
  },
  /** Issues a new token for an integration; the old one stops working at once. */
  'webhooks.admin.integration.rotate-token': {
    tenant: false,
    errors: ['NOT_FOUND'],
    request: z.object({ id: Id }),
    reply: IssuedToken,
  },
});

/**
 * What webhook-ingest asks the gateway (owner of companies and users) before acting for an
 * integration: the company's context and the acting user's name. `empresa` is null when the
 * company is unknown or inactive; `usuario` is null when the user is unknown or inactive.
 */
export const webhookGatewaySubjects = defineCatalog({
  'gateway.webhook.context': {
    tenant: false,
    errors: [],
    request: z.object({ empresa_id: Id, usuario_id: Id }),
    reply: z.object({
      empresa: z.object({ id: z.number().int(), nombre: z.string(), iva: z.string(), venderSinStock: z.boolean() }).nullable(),
      usuario: z.object({ id: z.number().int(), nombre: z.string() }).nullable(),
    }),
  },
});

export const webhookEvents = defineEvents({
  /** A delivery was stored (or put back by a replay) and waits for processing. */
  'events.webhooks.delivery.received': {
    payload: z.object({ id_entrega: z.number().int().positive(), empresa_id: z.number().int().positive() }),
  },
  /** An integration was created or its token changed: every webhook-ingest replica drops what it cached of tokens. */
  'events.webhooks.integration.changed': {
    payload: z.object({ id_integracion: z.number().int().positive(), empresa_id: z.number().int().positive() }),
  },
});
