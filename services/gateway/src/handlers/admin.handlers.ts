import { AppError, EVERY_SCOPE, gatewayEvents, normalizeScopes, type gatewaySubjects } from '@erp/contracts';
import { enqueueEvent, type Handlers, type OutboxRelay } from '@erp/bus';
import { inTransaction } from '@erp/db';
import type { Kysely, Transaction } from 'kysely';
import { insertApiKey, revokeApiKey } from '../db/api-key.repository';
import { empresaExists, listEmpresas, setEmpresaActive, setEmpresaSeedRefs } from '../db/empresa.repository';
import type { GatewayDb } from '../db/tables';
import { usuarioBelongsTo } from '../db/usuario.repository';
import { generateApiKey, hashApiKey, keyPrefix } from '../domain/api-key';
import { seedEmpresa } from '../flows/seed-empresa.flow';
import { announceKeyChange } from './api-keys.handlers';

/**
 * Back-office handlers: companies, users and API keys. Changes that affect credentials announce
 * themselves to every replica, and `onCredentialsChanged` applies them at once in this one.
 */
export function adminHandlers(
  db: Kysely<GatewayDb>,
  relay: OutboxRelay,
  onCredentialsChanged: (empresaId: number) => void = () => undefined,
): Handlers<typeof gatewaySubjects> {
  const announce = async (trx: Transaction<GatewayDb>, empresaId: number, apiKeyId?: number) => {
    await enqueueEvent(trx, gatewayEvents, 'events.gateway.credentials.changed', {
      empresa_id: empresaId,
      ...(apiKeyId !== undefined ? { api_key_id: apiKeyId } : {}),
    });
  };

  return {
    'gateway.admin.empresa.seed': async (req) => seedEmpresa(db, req),

    'gateway.admin.empresa.refs.record': async ({ empresa_id, refs }) => {
      if (!(await setEmpresaSeedRefs(db, empresa_id, refs))) throw AppError.notFound('recurso_no_encontrado', 'Empresa no encontrada');
      return { empresa_id };
    },

    'gateway.admin.empresa.set-active': async ({ empresa_id, activo }) => {
      await inTransaction(db, async (trx) => {
        if (!(await setEmpresaActive(trx, empresa_id, activo))) throw AppError.notFound('recurso_no_encontrado', 'Empresa no encontrada');
        await announce(trx, empresa_id);
      });
      relay.nudge();
      onCredentialsChanged(empresa_id);
      return { empresa_id, activo };
    },

    'gateway.admin.empresa.list': async () => listEmpresas(db),

    'gateway.admin.apikey.create': async ({ empresa_id, usuario_id, nombre, alcances }) => {
      if (!(await empresaExists(db, empresa_id))) throw AppError.notFound('recurso_no_encontrado', 'Empresa no encontrada');
      if (usuario_id !== undefined && !(await usuarioBelongsTo(db, empresa_id, usuario_id)))
        throw AppError.validation('El usuario no pertenece a la empresa');
      const key = generateApiKey();
      const scopes = normalizeScopes(alcances ?? EVERY_SCOPE);
      const id = await insertApiKey(db, {
        empresa_id,
        usuario_id: usuario_id ?? null,
        key_hash: hashApiKey(key),
        prefix: keyPrefix(key),
        activo: true,
        nombre: nombre ?? null,
        alcances: scopes,
      });
      return { id, key, prefix: keyPrefix(key), alcances: scopes };
    },

    'gateway.admin.apikey.revoke': async ({ id }) => {
      const revoked = await inTransaction(db, async (trx) => {
        const row = await revokeApiKey(trx, id);
        if (!row) throw AppError.notFound('recurso_no_encontrado', 'API key no encontrado');
        await announce(trx, row.empresa_id, row.id);
        await announceKeyChange(trx, row.empresa_id, 'revoked', row, null);
        return { id: row.id, empresa_id: row.empresa_id };
      });
      relay.nudge();
      onCredentialsChanged(revoked.empresa_id);
      return revoked;
    },
  };
}
