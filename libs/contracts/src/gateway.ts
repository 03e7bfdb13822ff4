import { z } from 'zod';
import { API_KEY_CHANGES, ApiKeyEventData, SCOPES } from './api-keys';
import { defineCatalog, defineEvents } from './catalog';

export const ROLES = ['Administrador', 'Supervisor', 'Vendedor'] as const;

const SeedUsuario = z.object({
  ref: z.string().min(1),
  nombre: z.string().min(1),
  rol: z.enum(ROLES),
  codigo: z.string().min(1).optional(),
  activo: z.boolean().default(true),
});

const SeedApiKey = z.object({
  ref: z.string().min(1),
  usuario: z.string().min(1).optional(),
  key: z.string().min(16).max(200).optional(),
  activo: z.boolean().default(true),
});

const RefMap = z.record(z.string(), z.number().int());

/** Back-office subjects of the gateway (companies, users, API keys). Never exposed over HTTP. */
export const gatewaySubjects = defineCatalog({
  'gateway.admin.empresa.seed': {
    tenant: false,
    errors: ['VALIDATION_FAILED'],
    request: z.object({
      clave: z.string().min(1).max(100).optional(),
      nombre: z.string().min(1).max(200),
      activo: z.boolean().default(true),
      vender_sin_stock: z.boolean().default(true),
      iva: z.number().min(0).max(100).default(13),
      usuarios: z.array(SeedUsuario).default([]),
      api_keys: z.array(SeedApiKey).default([]),
    }),
    reply: z.object({
      id: z.number().int(),
      existing: z.boolean(),
      usuarios: RefMap,
      /** Keys in clear: only those created now (or given explicitly in the request). */
      api_keys: z.record(z.string(), z.string()),
      /** The ref → id maps recorded by earlier seeding of this company, when it existed. */
      refs: z.record(z.string(), RefMap),
    }),
  },
  'gateway.admin.empresa.refs.record': {
    tenant: false,
    errors: ['NOT_FOUND'],
    request: z.object({ empresa_id: z.number().int().positive(), refs: z.record(z.string(), RefMap) }),
    reply: z.object({ empresa_id: z.number().int() }),
  },
  'gateway.admin.empresa.set-active': {
    tenant: false,
    errors: ['NOT_FOUND'],
    request: z.object({ empresa_id: z.number().int().positive(), activo: z.boolean() }),
    reply: z.object({ empresa_id: z.number().int(), activo: z.boolean() }),
  },
  'gateway.admin.empresa.list': {
    tenant: false,
    errors: [],
    request: z.object({}),
    reply: z.array(
      z.object({
        id: z.number().int(),
        clave: z.string().nullable(),
        nombre: z.string(),
        activo: z.boolean(),
        api_keys_activas: z.number().int(),
      }),
    ),
  },
  'gateway.admin.apikey.create': {
    tenant: false,
    errors: ['NOT_FOUND', 'VALIDATION_FAILED'],
    request: z.object({
      empresa_id: z.number().int().positive(),
      usuario_id: z.number().int().positive().optional(),
      nombre: z.string().min(1).max(100).optional(),
      /** Every scope when omitted. */
      alcances: z.array(z.enum(SCOPES)).min(1).optional(),
    }),
    reply: z.object({ id: z.number().int(), key: z.string(), prefix: z.string(), alcances: z.array(z.enum(SCOPES)) }),
  },
  'gateway.admin.apikey.revoke': {
    tenant: false,
    errors: ['NOT_FOUND'],
    request: z.object({ id: z.number().int().positive() }),
    reply: z.object({ id: z.number().int(), empresa_id: z.number().int() }),
  },
});

/** Published when a key or a company changes so every gateway replica drops its cached credentials. */
export const gatewayEvents = defineEvents({
  'events.gateway.credentials.changed': {
    payload: z.object({ empresa_id: z.number().int(), api_key_id: z.number().int().optional() }),
  },
  /** A key of the company about to expire (7 days before), rotated or revoked: the partner events `api_key.*`. */
  'events.gateway.apikey.changed': {
    payload: z.object({ empresa_id: z.number().int(), cambio: z.enum(API_KEY_CHANGES), api_key: ApiKeyEventData }),
  },
});

/** Lookups other services make into the gateway's users (the gateway owns them). */
export const gatewayDirectorySubjects = defineCatalog({
  /**
   * The company's users by code, trimmed and case-insensitive; an active user wins over an
   * inactive one, then the lowest id. Codes nobody has are absent from the reply.
   */
  'gateway.usuario.by-codigo': {
    tenant: true,
    errors: [],
    request: z.object({ codigos: z.array(z.string().min(1).max(255)).max(1000) }),
    /** Code as asked → user id. */
    reply: z.record(z.string(), z.number().int()),
  },
});
