import { AppError, type ParsedRequestOf, type ReplyInputOf, type gatewaySubjects } from '@erp/contracts';
import { inTransaction } from '@erp/db';
import type { Kysely } from 'kysely';
import { insertApiKey } from '../db/api-key.repository';
import { findEmpresaByClave, insertEmpresa } from '../db/empresa.repository';
import type { GatewayDb } from '../db/tables';
import { insertUsuario } from '../db/usuario.repository';
import { generateApiKey, hashApiKey, keyPrefix } from '../domain/api-key';

type SeedRequest = ParsedRequestOf<typeof gatewaySubjects, 'gateway.admin.empresa.seed'>;
type SeedReply = ReplyInputOf<typeof gatewaySubjects, 'gateway.admin.empresa.seed'>;
type RefMaps = Record<string, Record<string, number>>;

/**
 * Creates a company with its users and API keys in one transaction (the fixture loader and
 * `npm start`). A company already seeded under the same `clave` is answered as it is, with the
 * references recorded when it was seeded and only the keys the request spells out.
 */
export async function seedEmpresa(db: Kysely<GatewayDb>, req: SeedRequest): Promise<SeedReply> {
  return inTransaction(db, async (trx) => {
    if (req.clave) {
      const existing = await findEmpresaByClave(trx, req.clave);
      if (existing) {
        const refs = (existing.seed_refs ?? {}) as RefMaps;
        const explicitKeys = Object.fromEntries(req.api_keys.flatMap((k) => (k.key ? [[k.ref, k.key]] : [])));
        return { id: existing.id, existing: true, usuarios: refs.usuarios ?? {}, api_keys: explicitKeys, refs };
      }
    }
    const id = await insertEmpresa(trx, {
      clave: req.clave ?? null,
      nombre: req.nombre,
      activo: req.activo,
      vender_sin_stock: req.vender_sin_stock,
      iva: String(req.iva),
    });
    const usuarios: Record<string, number> = {};
    for (const u of req.usuarios) {
      usuarios[u.ref] = await insertUsuario(trx, {
        empresa_id: id,
        nombre: u.nombre,
        rol: u.rol,
        codigo: u.codigo ?? null,
        activo: u.activo,
      });
    }
    const apiKeys: Record<string, string> = {};
    for (const k of req.api_keys) {
      const usuarioId = k.usuario !== undefined ? usuarios[k.usuario] : undefined;
      if (k.usuario !== undefined && usuarioId === undefined)
        throw AppError.validation(`El API key "${k.ref}" usa el usuario desconocido "${k.usuario}"`);
      const key = k.key ?? generateApiKey();
      await insertApiKey(trx, {
        empresa_id: id,
        usuario_id: usuarioId ?? null,
        key_hash: hashApiKey(key),
        prefix: keyPrefix(key),
        activo: k.activo,
      });
      apiKeys[k.ref] = key;
    }
    return { id, existing: false, usuarios, api_keys: apiKeys, refs: {} };
  });
}
