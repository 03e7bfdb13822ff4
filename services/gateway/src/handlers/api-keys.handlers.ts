import {
  AppError,
  MAX_API_KEYS,
  gatewayEvents,
  grants,
  type API_KEY_CHANGES,
  type ApiKey,
  type Scope,
  type apiKeySubjects,
} from '@erp/contracts';
import { enqueueEvent, type Handlers, type OutboxRelay } from '@erp/bus';
import { inTransaction } from '@erp/db';
import type { Kysely, Transaction } from 'kysely';
import {
  insertApiKeyReturning,
  listApiKeys,
  lockLiveApiKey,
  lockLiveApiKeys,
  retireApiKey,
  revokeEmpresaApiKey,
  type ApiKeyRow,
} from '../db/api-key.repository';
import type { GatewayDb } from '../db/tables';
import { generateApiKey, hashApiKey, keyPrefix } from '../domain/api-key';

const KEYS_WRITE: Scope = 'keys:write';

/**
 * The company's own key management, asked by the gateway's `/api-keys` routes with the calling
 * key: a key creates only keys within its own scopes, a rotation keeps the old key for a grace,
 * a revocation is immediate on every replica (the credentials event clears their caches), and
 * the last live key able to manage keys cannot be revoked.
 */
export function apiKeyHandlers(
  db: Kysely<GatewayDb>,
  relay: OutboxRelay,
  onCredentialsChanged: (empresaId: number) => void,
): Handlers<typeof apiKeySubjects> {
  const changed = async (trx: Transaction<GatewayDb>, empresaId: number, apiKeyId: number) => {
    await enqueueEvent(trx, gatewayEvents, 'events.gateway.credentials.changed', { empresa_id: empresaId, api_key_id: apiKeyId });
  };
  const announced = (empresaId: number) => {
    relay.nudge();
    onCredentialsChanged(empresaId);
  };

  return {
    'gateway.apikeys.list': async (_req, ctx) => (await listApiKeys(db, ctx.empresa.id)).map(asApiKey),

    'gateway.apikeys.create': async ({ caller, nombre, alcances, expira_el }, ctx) => {
      const beyond = alcances.filter((scope) => !grants(caller.alcances, scope));
      if (beyond.length > 0)
        throw new AppError('FORBIDDEN', `El API key no puede dar alcances que no tiene: ${beyond.join(', ')}`, {
          alcance: [`Alcances del API key que la crea: ${caller.alcances.join(', ')}`],
        });
      const expiraEl = expira_el === undefined ? null : new Date(expira_el);
      if (expiraEl !== null && expiraEl.getTime() <= Date.now())
        throw AppError.validation('Datos inválidos', { expira_el: ['Debe estar en el futuro'] });
      const key = generateApiKey();
      const row = await inTransaction(db, async (trx) => {
        const live = await lockLiveApiKeys(trx, ctx.empresa.id);
        if (live.length >= MAX_API_KEYS)
          throw AppError.rule(
            'regla_de_negocio',
            `La empresa ya tiene ${MAX_API_KEYS} API keys vigentes: revoque alguno antes de crear otro`,
          );
        return insertApiKeyReturning(trx, {
          empresa_id: ctx.empresa.id,
          usuario_id: ctx.usuario?.id ?? null,
          key_hash: hashApiKey(key),
          prefix: keyPrefix(key),
          activo: true,
          nombre,
          alcances,
          expira_el: expiraEl,
        });
      });
      return { ...asApiKey(row), key };
    },

    'gateway.apikeys.rotate': async ({ caller, id, gracia_segundos }, ctx) => {
      const key = generateApiKey();
      const created = await inTransaction(db, async (trx) => {
        const old = await lockLiveApiKey(trx, ctx.empresa.id, id);
        if (!old) throw AppError.notFound('recurso_no_encontrado', 'API key no encontrado');
        const beyond = old.alcances.filter((scope) => !grants(caller.alcances, scope));
        if (beyond.length > 0)
          throw new AppError('FORBIDDEN', `El API key no puede rotar uno con alcances que no tiene: ${beyond.join(', ')}`, {
            alcance: [`Alcances del API key que lo pide: ${caller.alcances.join(', ')}`],
          });
        if (old.rotada_a !== null)
          throw AppError.rule('regla_de_negocio', `El API key ya fue rotado: su sucesor es el ${old.rotada_a}`, {
            id: ['Rote el API key nuevo'],
          });
        const row = await insertApiKeyReturning(trx, {
          empresa_id: ctx.empresa.id,
          usuario_id: old.usuario_id,
          key_hash: hashApiKey(key),
          prefix: keyPrefix(key),
          activo: true,
          nombre: old.nombre,
          alcances: old.alcances,
          expira_el: old.expira_el,
        });
        const until = await retireApiKey(trx, old.id, new Date(Date.now() + gracia_segundos * 1000), row.id);
        await changed(trx, ctx.empresa.id, old.id);
        await announceKeyChange(trx, ctx.empresa.id, 'rotated', { ...old, expira_el: until }, row.id);
        return row;
      });
      announced(ctx.empresa.id);
      return { ...asApiKey(created), key };
    },

    'gateway.apikeys.revoke': async ({ caller, id }, ctx) => {
      await inTransaction(db, async (trx) => {
        const live = await lockLiveApiKeys(trx, ctx.empresa.id);
        const target = live.find((k) => k.id === id);
        if (!target) throw AppError.notFound('recurso_no_encontrado', 'API key no encontrado');
        const beyond = target.alcances.filter((scope) => !grants(caller.alcances, scope));
        if (beyond.length > 0)
          throw new AppError('FORBIDDEN', `El API key no puede revocar uno con alcances que no tiene: ${beyond.join(', ')}`, {
            alcance: [`Alcances del API key que lo pide: ${caller.alcances.join(', ')}`],
          });
        const managers = live.filter((k) => grants(k.alcances, KEYS_WRITE));
        if (grants(target.alcances, KEYS_WRITE) && managers.length === 1)
          throw AppError.rule(
            'regla_de_negocio',
            'Es el último API key vigente con keys:write: la empresa no podría gestionar sus claves',
            {
              id: ['Cree otro API key con keys:write antes de revocar este'],
            },
          );
        const revoked = await revokeEmpresaApiKey(trx, ctx.empresa.id, id);
        await changed(trx, ctx.empresa.id, id);
        if (revoked) await announceKeyChange(trx, ctx.empresa.id, 'revoked', revoked, null);
      });
      announced(ctx.empresa.id);
      return { id };
    },
  };
}

/** Records the partner event `api_key.<cambio>` of a key in the change's transaction. */
export async function announceKeyChange(
  trx: Transaction<GatewayDb>,
  empresaId: number,
  cambio: (typeof API_KEY_CHANGES)[number],
  key: { id: number; nombre: string | null; prefix: string; alcances: Scope[]; expira_el: Date | null },
  sucesor: number | null,
): Promise<void> {
  await enqueueEvent(trx, gatewayEvents, 'events.gateway.apikey.changed', {
    empresa_id: empresaId,
    cambio,
    api_key: {
      id: key.id,
      nombre: key.nombre ?? `API key ${key.id}`,
      prefijo: key.prefix,
      alcances: key.alcances,
      expira_el: key.expira_el?.toISOString() ?? null,
      id_sucesor: sucesor,
    },
  });
}

function asApiKey(
  row: Pick<ApiKeyRow, 'id' | 'nombre' | 'prefix' | 'alcances' | 'created_at' | 'expira_el' | 'ultimo_uso' | 'ultima_direccion'>,
): ApiKey {
  return {
    id: row.id,
    nombre: row.nombre ?? `API key ${row.id}`,
    prefijo: row.prefix,
    alcances: row.alcances,
    created_at: row.created_at.toISOString(),
    expira_el: row.expira_el?.toISOString() ?? null,
    ultimo_uso: row.ultimo_uso?.toISOString() ?? null,
    ultima_direccion: row.ultima_direccion,
  };
}
