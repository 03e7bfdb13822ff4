import { AppError, gatewayEvents, type gatewaySubjects } from '@erp/contracts';
import { enqueueEvent, type Handlers, type OutboxRelay } from '@erp/bus';
import { inTransaction } from '@erp/db';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { GatewayDb } from '../db/tables';
import { generateApiKey, hashApiKey, keyPrefix } from '../domain/api-key';

type RefMaps = Record<string, Record<string, number>>;

/**
 * Back-office handlers: companies, users and API keys. Changes that affect credentials announce
 * themselves to every replica, and `onCredentialsChanged` applies them at once in this one.
 */
export function adminHandlers(db: Kysely<GatewayDb>, relay: OutboxRelay, onCredentialsChanged: (empresaId: number) => void = () => undefined): Handlers<typeof gatewaySubjects> {
  const announce = async (trx: Transaction<GatewayDb>, empresaId: number, apiKeyId?: number) => {
    await enqueueEvent(trx, gatewayEvents, 'events.gateway.credentials.changed', {
      empresa_id: empresaId,
      ...(apiKeyId !== undefined ? { api_key_id: apiKeyId } : {}),
    });
  };

  return {
    'gateway.admin.empresa.seed': async (req) =>
      inTransaction(db, async (trx) => {
        if (req.clave) {
          const existing = await trx.selectFrom('empresas').select(['id', 'seed_refs']).where('clave', '=', req.clave).executeTakeFirst();
          if (existing) {
            const refs = (existing.seed_refs ?? {}) as RefMaps;
            const explicitKeys = Object.fromEntries(req.api_keys.flatMap((k) => (k.key ? [[k.ref, k.key]] : [])));
            return { id: existing.id, existing: true, usuarios: refs.usuarios ?? {}, api_keys: explicitKeys, refs };
          }
        }
        const { id } = await trx
          .insertInto('empresas')
          .values({ clave: req.clave ?? null, nombre: req.nombre, activo: req.activo, vender_sin_stock: req.vender_sin_stock, iva: String(req.iva) })
          .returning('id')
          .executeTakeFirstOrThrow();
        const usuarios: Record<string, number> = {};
        for (const u of req.usuarios) {
          const row = await trx
            .insertInto('usuarios')
            .values({ empresa_id: id, nombre: u.nombre, rol: u.rol, codigo: u.codigo ?? null, activo: u.activo })
            .returning('id')
            .executeTakeFirstOrThrow();
          usuarios[u.ref] = row.id;
        }
        const apiKeys: Record<string, string> = {};
        for (const k of req.api_keys) {
          const usuarioId = k.usuario !== undefined ? usuarios[k.usuario] : undefined;
          if (k.usuario !== undefined && usuarioId === undefined) throw AppError.validation(`El API key "${k.ref}" usa el usuario desconocido "${k.usuario}"`);
          const key = k.key ?? generateApiKey();
          await trx
            .insertInto('api_keys')
            .values({ empresa_id: id, usuario_id: usuarioId ?? null, key_hash: hashApiKey(key), prefix: keyPrefix(key), activo: k.activo, revoked_at: null })
            .execute();
          apiKeys[k.ref] = key;
        }
        return { id, existing: false, usuarios, api_keys: apiKeys, refs: {} };
      }),

    'gateway.admin.empresa.refs.record': async ({ empresa_id, refs }) => {
      const updated = await db
        .updateTable('empresas')
        .set({ seed_refs: JSON.stringify(refs), updated_at: sql<Date>`now()` })
        .where('id', '=', empresa_id)
        .executeTakeFirst();
      if (updated.numUpdatedRows === 0n) throw AppError.notFound('Empresa no encontrada');
      return { empresa_id };
    },

    'gateway.admin.empresa.set-active': async ({ empresa_id, activo }) => {
      await inTransaction(db, async (trx) => {
        const updated = await trx
          .updateTable('empresas')
          .set({ activo, updated_at: sql<Date>`now()` })
          .where('id', '=', empresa_id)
          .executeTakeFirst();
        if (updated.numUpdatedRows === 0n) throw AppError.notFound('Empresa no encontrada');
        await announce(trx, empresa_id);
      });
      relay.nudge();
      onCredentialsChanged(empresa_id);
      return { empresa_id, activo };
    },

    'gateway.admin.empresa.list': async () =>
      db
        .selectFrom('empresas as e')
        .select((eb) => [
          'e.id',
          'e.clave',
          'e.nombre',
          'e.activo',
          eb
            .selectFrom('api_keys as k')
            .select(sql<number>`count(*)::int`.as('n'))
            .whereRef('k.empresa_id', '=', 'e.id')
            .where('k.activo', '=', true)
            .as('api_keys_activas'),
        ])
        .orderBy('e.id')
        .execute()
        .then((rows) => rows.map((r) => ({ ...r, api_keys_activas: r.api_keys_activas ?? 0 }))),

    'gateway.admin.apikey.create': async ({ empresa_id, usuario_id }) => {
      const empresa = await db.selectFrom('empresas').select('id').where('id', '=', empresa_id).executeTakeFirst();
      if (!empresa) throw AppError.notFound('Empresa no encontrada');
      if (usuario_id !== undefined) {
        const usuario = await db.selectFrom('usuarios').select('id').where('id', '=', usuario_id).where('empresa_id', '=', empresa_id).executeTakeFirst();
        if (!usuario) throw AppError.validation('El usuario no pertenece a la empresa');
      }
      const key = generateApiKey();
      const { id } = await db
        .insertInto('api_keys')
        .values({ empresa_id, usuario_id: usuario_id ?? null, key_hash: hashApiKey(key), prefix: keyPrefix(key), activo: true, revoked_at: null })
        .returning('id')
        .executeTakeFirstOrThrow();
      return { id, key, prefix: keyPrefix(key) };
    },

    'gateway.admin.apikey.revoke': async ({ id }) => {
      const revoked = await inTransaction(db, async (trx) => {
        const row = await trx
          .updateTable('api_keys')
          .set({ activo: false, revoked_at: sql<Date>`coalesce(revoked_at, now())` })
          .where('id', '=', id)
          .returning(['id', 'empresa_id'])
          .executeTakeFirst();
        if (!row) throw AppError.notFound('API key no encontrado');
        await announce(trx, row.empresa_id, row.id);
        return row;
      });
      relay.nudge();
      onCredentialsChanged(revoked.empresa_id);
      return revoked;
    },
  };
}
