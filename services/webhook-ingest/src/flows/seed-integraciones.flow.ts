import { enqueueEvent } from '@erp/bus';
import { AppError, webhookEvents, webhookPath, type ParsedRequestOf, type webhookSubjects } from '@erp/contracts';
import type { Transaction } from 'kysely';
import { insertConciliacion } from '../db/conciliacion.repository';
import { insertIntegracion } from '../db/integracion.repository';
import type { WebhookDb } from '../db/tables';
import { KeyringError, credentialsContext, sealSecrets, type Keyring } from '../domain/credentials';
import { generateToken, hashToken, tokenPrefix } from '../domain/token';

type SeedRequest = ParsedRequestOf<typeof webhookSubjects, 'webhooks.admin.seed'>;
type SeedIntegracion = SeedRequest['integraciones'][number];

/** Announces a change of an integration to every replica (in the transaction of the change). */
export const announceIntegracion = (trx: Transaction<WebhookDb>, id: number, empresaId: number) =>
  enqueueEvent(trx, webhookEvents, 'events.webhooks.integration.changed', { id_integracion: id, empresa_id: empresaId });

/**
 * Writes the request's integrations in the caller's transaction, each announced, their
 * references resolved through `req.refs`; answers each one's id, token and path by `ref`.
 */
export async function seedIntegraciones(trx: Transaction<WebhookDb>, req: SeedRequest, keyring: Keyring) {
  const out: Record<string, { id: number; token: string; path: string }> = {};
  for (const i of req.integraciones) {
    if (out[i.ref]) throw AppError.validation(`La integración "${i.ref}" está repetida`);
    const ref = refResolver(req.refs, i);
    const token = i.token ?? generateToken();
    const path = webhookPath(i.plataforma, token);
    const tienda = i.tienda ? sealTienda(keyring, i, req.empresa_id, path) : undefined;
    const id = await insertIntegracion(trx, {
      empresa_id: req.empresa_id,
      plataforma: i.plataforma,
      usuario_id: ref('usuarios', i.usuario, true)!,
      sucursal_id: ref('sucursales', i.sucursal, true)!,
      bodega_id: ref('bodegas', i.bodega, true)!,
      documento_id: ref('documentos', i.documento, false),
      canal_id: ref('canales', i.canal, false),
      producto_envio_id: ref('productos', i.producto_envio, false),
      token_hash: hashToken(token),
      token_prefix: tokenPrefix(token),
      secreto: i.secreto ?? null,
      activo: i.activo,
      tienda_url: i.tienda?.url ?? null,
      tienda_credenciales: tienda ?? null,
      tienda_ubicacion: i.tienda?.ubicacion ?? null,
      stock_colchon: i.stock_colchon,
      sincronizar_stock: i.sincronizar_stock ?? i.tienda !== undefined,
    });
    if (tienda) await insertConciliacion(trx, id, req.empresa_id);
    await announceIntegracion(trx, id, req.empresa_id);
    out[i.ref] = { id, token, path };
  }
  return { integraciones: out };
}

/** The shop's credentials and our webhook path, sealed for the integration's company and platform. */
function sealTienda(keyring: Keyring, i: SeedIntegracion, empresaId: number, ruta: string): Buffer {
  const { clave, secreto, token } = i.tienda!;
  try {
    return sealSecrets(keyring, { clave, secreto, token, ruta }, credentialsContext(empresaId, i.plataforma));
  } catch (err) {
    if (err instanceof KeyringError) throw AppError.validation(`La integración "${i.ref}" trae tienda, pero ${err.message}`);
    throw err;
  }
}

/** The id another service loaded under `name` in the section `kind`; null when not named. */
function refResolver(refs: SeedRequest['refs'], i: SeedIntegracion) {
  return (kind: string, name: string | undefined, required: boolean): number | null => {
    if (name === undefined) return null;
    const map = refs[kind];
    // A section no service has loaded yet leaves the reference empty: processing reports it.
    if (!map) {
      if (required) throw AppError.validation(`La integración "${i.ref}" usa ${kind} "${name}", que no se cargó`);
      return null;
    }
    const id = map[name];
    if (id === undefined) throw AppError.validation(`La integración "${i.ref}" usa ${kind} desconocido "${name}"`);
    return id;
  };
}
