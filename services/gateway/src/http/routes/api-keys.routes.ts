import { z } from 'zod';
import {
  ApiKey,
  ApiKeyCreateBody,
  ApiKeyCreated,
  ApiKeyRotateBody,
  DEFAULT_ROTATION_GRACE_SECONDS,
  IdParam,
  MAX_API_KEYS,
  SCOPES,
  apiKeySubjects,
} from '@erp/contracts';
import { defineRoute, type ApiContext } from '../route';

const caller = ({ credential }: ApiContext) => ({ alcances: [...credential.alcances] });

const SCOPES_TEXT = [
  `Alcances (\`recurso:nivel\`; \`write\` incluye \`read\`): ${SCOPES.map((s) => `\`${s}\``).join(', ')}.`,
  'Cada operación dice el que necesita; sin él, 403 `alcance_insuficiente` con el alcance en `details.alcance` y en `X-Accepted-Scopes`.',
].join('\n');

export const apiKeysRoutes = [
  defineRoute({
    method: 'post',
    path: '/api-keys',
    summary: 'Crea un API key de la empresa con los alcances dados; la clave se muestra solo aquí',
    description: [
      SCOPES_TEXT,
      '',
      'Un API key solo crea claves con alcances que él mismo tiene (422 `alcance_insuficiente` si no).',
      `Con \`expira_el\` (en el futuro) deja de funcionar entonces: 401 \`clave_expirada\`. Hasta ${MAX_API_KEYS} claves vigentes por empresa.`,
      'Las claves tienen la forma `erpk_` + 30 caracteres base62 + 6 de suma de verificación (CRC32), reconocible por los',
      'programas de detección de secretos con la expresión `\\berpk_[0-9A-Za-z]{36}\\b`.',
    ].join('\n'),
    body: ApiKeyCreateBody,
    errors: [403],
    response: { kind: 'single', schema: ApiKeyCreated, statuses: { 201: 'API key creado' } },
    handle: async ({ body }, api) => {
      const created = await api.bus.request(apiKeySubjects, 'gateway.apikeys.create', { caller: caller(api), ...body }, api.ctx);
      api.credentialsChanged();
      return { status: 201, data: created, location: `/api-keys/${created.id}` };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api-keys',
    summary: 'Los API keys vigentes de la empresa (sin la clave): alcances, vencimiento y último uso',
    description:
      '`ultimo_uso` es la hora (UTC, en punto) del último uso y `ultima_direccion` la dirección del cliente; se registran por lotes y pueden tardar un minuto en verse.',
    response: { kind: 'single', schema: z.array(ApiKey) },
    handle: async (_input, { bus, ctx }) => ({ data: await bus.request(apiKeySubjects, 'gateway.apikeys.list', {}, ctx) }),
  }),
  defineRoute({
    method: 'post',
    path: '/api-keys/:id/rotate',
    summary: 'Rota un API key: uno nuevo con los mismos alcances; el anterior sigue funcionando durante la gracia',
    description: [
      `Sin cuerpo, o \`{gracia_segundos}\`: el anterior funciona hasta entonces (${DEFAULT_ROTATION_GRACE_SECONDS / 3600} h por omisión, 7 días como máximo; 0 lo retira ya)`,
      'y su `expira_el` lo dice. Un API key ya rotado no se rota otra vez (422): se rota el nuevo.',
    ].join('\n'),
    params: IdParam,
    body: ApiKeyRotateBody,
    errors: [403],
    response: { kind: 'single', schema: ApiKeyCreated, statuses: { 201: 'API key nuevo' } },
    handle: async ({ params, body }, api) => {
      const gracia_segundos = body.gracia_segundos ?? DEFAULT_ROTATION_GRACE_SECONDS;
      const created = await api.bus.request(
        apiKeySubjects,
        'gateway.apikeys.rotate',
        { caller: caller(api), id: params.id, gracia_segundos },
        api.ctx,
      );
      api.credentialsChanged();
      return { status: 201, data: created, location: `/api-keys/${created.id}` };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/api-keys/:id',
    summary: 'Revoca un API key: deja de funcionar de inmediato en todas las réplicas',
    description:
      'No se revoca el último API key vigente con `keys:write` de la empresa (422): la empresa se quedaría sin poder gestionar sus claves.',
    params: IdParam,
    errors: [403, 422],
    response: { kind: 'single', schema: z.object({ id: z.number().int() }) },
    handle: async ({ params }, api) => {
      const revoked = await api.bus.request(apiKeySubjects, 'gateway.apikeys.revoke', { caller: caller(api), id: params.id }, api.ctx);
      api.credentialsChanged();
      return { data: revoked };
    },
  }),
];
