import { z } from 'zod';
import { defineCatalog } from './catalog';
import { Timestamp, documentAs } from './http';

/** What a key's scopes are about: one resource of the API each. */
export const SCOPE_RESOURCES = ['sales', 'inventory', 'returns', 'packages', 'events', 'exports', 'keys'] as const;
export type ScopeResource = (typeof SCOPE_RESOURCES)[number];
export const SCOPE_LEVELS = ['read', 'write'] as const;
export type ScopeLevel = (typeof SCOPE_LEVELS)[number];
/** `recurso:nivel`; `write` implies `read` of the same resource. */
export type Scope = `${ScopeResource}:${ScopeLevel}`;

export const SCOPES = SCOPE_RESOURCES.flatMap((r) => SCOPE_LEVELS.map((l) => `${r}:${l}` as Scope)) as [Scope, ...Scope[]];
/** Every resource at `write`: what keys made before scopes existed hold, and what a company's first key gets. */
export const EVERY_SCOPE: readonly Scope[] = SCOPE_RESOURCES.map((r) => `${r}:write` as Scope);

/** Whether `held` lets a request that needs `needed` through: the same scope, or `write` of its resource for a `read`. */
export function grants(held: readonly Scope[], needed: Scope): boolean {
  if (held.includes(needed)) return true;
  const [resource, level] = needed.split(':') as [ScopeResource, ScopeLevel];
  return level === 'read' && held.includes(`${resource}:write`);
}

/** The scopes a key holds, as few as say the same (`sales:read` is dropped beside `sales:write`), in the catalogue's order. */
export function normalizeScopes(scopes: readonly Scope[]): Scope[] {
  return SCOPES.filter((s) => scopes.includes(s) && !(s.endsWith(':read') && scopes.includes(s.replace(':read', ':write') as Scope)));
}

const SCOPE_MESSAGE = `Alcance desconocido; los válidos son ${SCOPES.join(', ')}`;
const ScopeName = z.enum(SCOPES, { message: SCOPE_MESSAGE });

/** Longest grace a rotated key keeps working, and the default one. */
export const MAX_ROTATION_GRACE_SECONDS = 7 * 24 * 3600;
export const DEFAULT_ROTATION_GRACE_SECONDS = 24 * 3600;
/** Live keys a company may hold at once. */
export const MAX_API_KEYS = 50;

/**
 * The format of every key made since 1.7.0: `erpk_`, 30 random base62 characters and a checksum
 * (the CRC32 of the random part in 6 base62 characters), so secret scanners recognise a leaked
 * key offline and the gateway refuses a mistyped one without looking it up.
 */
export const API_KEY_PATTERN = /^erpk_[0-9A-Za-z]{36}$/;
export const API_KEY_PREFIX = 'erpk_';

const Nombre = z
  .string({ message: 'El nombre es obligatorio' })
  .trim()
  .min(1, 'El nombre es obligatorio')
  .max(100, 'El nombre no puede tener más de 100 caracteres');
const Alcances = z
  .array(ScopeName, { message: 'Debe ser una lista de alcances' })
  .min(1, 'Debe tener al menos un alcance')
  .max(SCOPES.length, 'Demasiados alcances')
  .transform((scopes) => normalizeScopes(scopes));

/** Body of `POST /api-keys`. */
export const ApiKeyCreateBody = z.strictObject({
  nombre: Nombre,
  alcances: documentAs(Alcances, {
    type: 'array',
    items: { type: 'string', enum: SCOPES },
    minItems: 1,
    description: '`recurso:nivel`; `write` incluye `read`. Solo los que el API key que la crea tiene.',
  }),
  expira_el: z.iso
    .datetime({ offset: true, message: 'Debe ser una fecha y hora ISO 8601, p. ej. 2027-01-31T00:00:00Z' })
    .optional()
    .describe('Cuándo deja de funcionar (en el futuro); sin él, nunca.'),
});
export type ApiKeyCreateBody = z.output<typeof ApiKeyCreateBody>;

/** Body of `POST /api-keys/{id}/rotate`: the old key keeps working for the grace, 24 h unless said. */
export const ApiKeyRotateBody = z.strictObject({
  gracia_segundos: z
    .number({ message: 'Debe ser un número entero de segundos' })
    .int('Debe ser un número entero de segundos')
    .min(0, 'No puede ser negativo')
    .max(MAX_ROTATION_GRACE_SECONDS, `No puede pasar de ${MAX_ROTATION_GRACE_SECONDS} (7 días)`)
    .optional(),
});

/** A key as every read answers it: never the key itself, which only its creation shows. */
export const ApiKey = z.object({
  id: z.number().int(),
  nombre: z.string(),
  /** The first characters of the key, to recognise it. */
  prefijo: z.string(),
  alcances: z.array(ScopeName),
  created_at: Timestamp,
  /** When it stops working (null: never); a rotated key's is the end of its grace. */
  expira_el: Timestamp.nullable(),
  /** The hour of its last use (null: never used), recorded in batches: it may lag a minute. */
  ultimo_uso: Timestamp.nullable(),
  /** The client address of its last use. */
  ultima_direccion: z.string().nullable(),
});
export type ApiKey = z.output<typeof ApiKey>;

/** `data` of the partner events `api_key.expiring`, `api_key.rotated` and `api_key.revoked`. */
export const ApiKeyEventData = z.object({
  id: z.number().int(),
  nombre: z.string(),
  prefijo: z.string(),
  alcances: z.array(ScopeName),
  /** When it stops (stopped) working; a rotated key's is the end of its grace. */
  expira_el: Timestamp.nullable(),
  /** The key that replaced it by rotation (null otherwise). */
  id_sucesor: z.number().int().nullable(),
});
export type ApiKeyEventData = z.output<typeof ApiKeyEventData>;

/** What happened to a key, as the gateway announces it: each is a partner event `api_key.<cambio>`. */
export const API_KEY_CHANGES = ['expiring', 'rotated', 'revoked'] as const;

/** A key as its creation (or rotation) answers it: with the key, shown this once. */
export const ApiKeyCreated = ApiKey.extend({ key: z.string() });

const KeyId = z.number().int().positive();

/** The key that asks, as the gateway knows it: its scopes bound what it may create. */
const Caller = z.object({ alcances: z.array(ScopeName) });

/** The company's key management, requested by the gateway's routes and served by the gateway service. */
export const apiKeySubjects = defineCatalog({
  'gateway.apikeys.list': {
    tenant: true,
    errors: [],
    request: z.object({}),
    reply: z.array(ApiKey),
  },
  'gateway.apikeys.create': {
    tenant: true,
    errors: ['VALIDATION_FAILED', 'BUSINESS_RULE'],
    request: z.object({ caller: Caller, nombre: z.string(), alcances: z.array(ScopeName), expira_el: z.string().optional() }),
    reply: ApiKeyCreated,
  },
  'gateway.apikeys.rotate': {
    tenant: true,
    errors: ['NOT_FOUND', 'BUSINESS_RULE'],
    request: z.object({ caller: Caller, id: KeyId, gracia_segundos: z.number().int() }),
    reply: ApiKeyCreated,
  },
  'gateway.apikeys.revoke': {
    tenant: true,
    errors: ['NOT_FOUND', 'BUSINESS_RULE'],
    request: z.object({ caller: Caller, id: KeyId }),
    reply: z.object({ id: z.number().int() }),
  },
});
