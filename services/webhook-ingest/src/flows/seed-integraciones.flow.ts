import { enqueueEvent } from '@erp/bus';
import { AppError, webhookEvents, webhookPath, type ParsedRequestOf, type webhookSubjects } from '@erp/contracts';
import type { Transaction } from 'kysely';
import { insertIntegracion } from '../db/integracion.repository';
import type { WebhookDb } from '../db/tables';
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
export async function seedIntegraciones(trx: Transaction<WebhookDb>, req: SeedRequest) {
  const out: Record<string, { id: number; token: string; path: string }> = {};
  for (const i of req.integraciones) {
    if (out[i.ref]) throw AppError.validation(`La integración "${i.ref}" está repetida`);
    const ref = refResolver(req.refs, i);
    const token = i.token ?? generateToken();
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
    });
    await announceIntegracion(trx, id, req.empresa_id);
    out[i.ref] = { id, token, path: webhookPath(i.plataforma, token) };
  }
  return { integraciones: out };
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
