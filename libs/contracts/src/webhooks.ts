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

/**
 * The shop's Admin API, for reconciliation and stock: its base URL (HTTPS) and credentials —
 * WooCommerce: REST API consumer key and secret; Shopify: an Admin API access token.
 * `ubicacion` is the Shopify location (GID) whose stock is the integration's warehouse.
 */
export const Tienda = z
  .object({
    url: z
      .string()
      .url()
      .max(500)
      .refine((u) => u.startsWith('https://'), 'La tienda se llama solo por HTTPS'),
    clave: z.string().min(1).max(500).optional(),
    secreto: z.string().min(1).max(500).optional(),
    token: z.string().min(1).max(500).optional(),
    ubicacion: z
      .string()
      .regex(/^gid:\/\/shopify\/Location\/\d+$/, 'Debe ser el GID de una ubicación de Shopify (gid://shopify/Location/N)')
      .optional(),
  })
  .strict();
export type Tienda = z.output<typeof Tienda>;

const SeedIntegracion = z
  .object({
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
    tienda: Tienda.optional(),
    /** Units of each product kept back from the shop's stock. */
    stock_colchon: z.number().int().min(0).max(1_000_000).default(0),
    /** Whether the shop is sent our stock; absent: when it has `tienda`. */
    sincronizar_stock: z.boolean().optional(),
  })
  .strict()
  .superRefine((i, ctx) => {
    const t = i.tienda;
    if (!t) {
      if (i.sincronizar_stock)
        ctx.addIssue({ code: 'custom', path: ['sincronizar_stock'], message: 'Sin tienda no hay a dónde enviar el stock' });
      return;
    }
    const wanted = i.plataforma === 'woocommerce' ? (['clave', 'secreto'] as const) : (['token'] as const);
    const foreign = i.plataforma === 'woocommerce' ? (['token', 'ubicacion'] as const) : (['clave', 'secreto'] as const);
    for (const f of wanted)
      if (!t[f]) ctx.addIssue({ code: 'custom', path: ['tienda', f], message: `Una tienda ${i.plataforma} necesita ${f}` });
    for (const f of foreign)
      if (t[f]) ctx.addIssue({ code: 'custom', path: ['tienda', f], message: `Una tienda ${i.plataforma} no usa ${f}` });
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

/**
 * What the shop's webhook subscription for our endpoint was found to be at the last pass:
 * `activa`; `restaurada` (disabled or deleted, and re-activated or re-created by that pass);
 * `sin_url` (no public base URL is configured, so ours cannot be told apart or re-created);
 * `desconocida` (not checked yet, or the shop could not be asked); `sin_tienda` (no shop API).
 */
export const ESTADOS_SUSCRIPCION = ['activa', 'restaurada', 'sin_url', 'desconocida', 'sin_tienda'] as const;
export type EstadoSuscripcion = (typeof ESTADOS_SUSCRIPCION)[number];

/** One integration as `GET /integrations` shows it: never a token, a secret or a credential. */
export const IntegracionEstado = z.object({
  id: z.number().int(),
  plataforma: z.enum(PLATAFORMAS),
  activo: z.boolean(),
  tienda: z.object({ url: z.string() }).nullable().meta({ description: 'La API de la tienda (solo su URL), o null si no se configuró' }),
  suscripcion: z.object({
    estado: z.enum(ESTADOS_SUSCRIPCION),
    restauraciones: z.number().int().meta({ description: 'Veces que una conciliación reactivó o recreó la suscripción' }),
  }),
  conciliacion: z.object({
    ultima_at: z.string().nullable().meta({ description: 'Fin de la última pasada (ISO 8601), o null si aún no hubo' }),
    resultado: z.enum(['correcta', 'fallida']).nullable(),
    error: z.string().nullable().meta({ description: 'Por qué falló la última pasada' }),
    proxima_at: z.string().nullable(),
    pedidos_leidos: z.number().int().meta({ description: 'Pedidos que leyó la última pasada' }),
    pedidos_recuperados: z.number().int().meta({ description: 'Pedidos que trajo la conciliación antes que su webhook, desde siempre' }),
  }),
  stock: z
    .object({
      sincronizar: z.boolean().meta({ description: 'Si la tienda recibe nuestro stock' }),
      colchon: z.number().int().meta({ description: 'Unidades de cada producto que no se ofrecen en la tienda' }),
      productos_mapeados: z.number().int().meta({ description: 'Productos cuyo SKU tiene la tienda' }),
      skus_sin_mapear: z.number().int().meta({ description: 'Productos cuyo SKU la tienda no tiene: su stock no se le envía' }),
      pendientes: z.number().int().meta({ description: 'Productos con un cambio de stock que la tienda aún no recibió' }),
      fallando: z.number().int().meta({ description: 'Productos cuyo último envío falló (se reintenta)' }),
      ultimo_error: z.string().nullable(),
      envios_ultima_hora: z.number().int(),
      retraso_ms: z
        .object({ p50: z.number().nullable(), p99: z.number().nullable() })
        .meta({ description: 'Del primer cambio a que la tienda lo recibió, en la última hora (null sin envíos)' }),
    })
    .meta({ description: 'El stock que enviamos a la tienda' }),
  webhooks_perdidos: z
    .object({
      dias: z.number().int(),
      pedidos: z.number().int(),
      recuperados: z.number().int(),
      tasa: z.string().nullable().meta({ description: 'recuperados / pedidos, decimal de cuatro cifras; null sin pedidos' }),
    })
    .meta({ description: 'Pedidos de la ventana que llegaron primero por conciliación: la tasa medida de webhooks perdidos' }),
});
export type IntegracionEstado = z.output<typeof IntegracionEstado>;

/** What a reconciliation pass found, per integration. */
export const PasadaConciliacion = z.object({
  id_integracion: z.number().int(),
  resultado: z.enum(['correcta', 'fallida', 'ocupada']),
  error: z.string().nullable(),
  pedidos_leidos: z.number().int(),
  pedidos_entregados: z.number().int(),
  pedidos_nuevos: z.number().int(),
  suscripcion: z.enum(ESTADOS_SUSCRIPCION),
});
export type PasadaConciliacion = z.output<typeof PasadaConciliacion>;

/** What the drift check found of one integration: the shop's stock and orders against ours. */
export const Deriva = z.object({
  id_integracion: z.number().int(),
  resultado: z.enum(['revisada', 'fallida', 'sin_tienda']),
  error: z.string().nullable(),
  productos_revisados: z.number().int(),
  stock_distinto: z.array(z.object({ codigo: z.string(), tienda: z.number().int().nullable(), esperado: z.number().int() })),
  skus_sin_producto: z.array(z.string()).meta({ description: 'SKUs de la tienda que no son productos nuestros' }),
  pedidos_revisados: z.number().int(),
  pedidos_pendientes: z.array(z.string()).meta({ description: 'Pedidos de la ventana que aún no tenemos en su última versión' }),
  reparada: z.boolean(),
});
export type Deriva = z.output<typeof Deriva>;

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
  /**
   * One reconciliation pass now, of one integration or of every one with a shop API, whether due
   * or not; an integration whose pass runs elsewhere at the time is `ocupada`.
   */
  'webhooks.admin.reconcile': {
    tenant: false,
    errors: ['NOT_FOUND'],
    request: z.object({ id_integracion: Id.optional() }),
    reply: z.array(PasadaConciliacion),
  },
  /**
   * Seals every shop credential that another key sealed with the first key of the keyring (a key
   * rotation); answers how many it sealed again and with which key.
   */
  'webhooks.admin.credentials.reseal': {
    tenant: false,
    errors: ['VALIDATION_FAILED'],
    request: z.object({}),
    reply: z.object({ reselladas: z.number().int(), clave: z.string() }),
  },
  /**
   * Compares each shop (of one integration, or every one that shows our stock) with us: every
   * product's stock (ours less the buffer, never below 0, whole units) and every order changed in
   * the last `dias` days; with `reparar`, pushes the stock that differs and reconciles the orders.
   */
  'webhooks.admin.drift': {
    tenant: false,
    errors: ['NOT_FOUND'],
    request: z.object({
      id_integracion: Id.optional(),
      reparar: z.boolean().default(false),
      dias: z.number().int().min(1).max(90).default(3),
    }),
    reply: z.array(Deriva),
  },
  /** Issues a new token for an integration; the old one stops working at once. */
  'webhooks.admin.integration.rotate-token': {
    tenant: false,
    errors: ['NOT_FOUND'],
    request: z.object({ id: Id }),
    reply: IssuedToken,
  },
});

/** The partner API's reads of webhook-ingest. */
export const webhookApiSubjects = defineCatalog({
  'webhooks.integration.list': {
    tenant: true,
    errors: [],
    request: z.object({}),
    reply: z.array(IntegracionEstado),
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

/**
 * Webhook-ingest's work handed to itself through the intake stream, which nothing else reads: a
 * burst of deliveries is not read, and settled, by the partners' event log too.
 */
export const webhookIntakeEvents = defineEvents({
  /** A delivery was stored (or put back by a replay) and waits for processing. */
  'intake.webhooks.delivery.received': {
    payload: z.object({ id_entrega: z.number().int().positive(), empresa_id: z.number().int().positive() }),
  },
});

export const webhookEvents = defineEvents({
  /** An integration was created or its token changed: every webhook-ingest replica drops what it cached of tokens. */
  'events.webhooks.integration.changed': {
    payload: z.object({ id_integracion: z.number().int().positive(), empresa_id: z.number().int().positive() }),
  },
});
