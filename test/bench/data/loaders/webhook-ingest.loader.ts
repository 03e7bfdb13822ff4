import { createHash } from 'node:crypto';
import { copyRows, nextId, syncIdentity } from '../copy';
import { missingTables, type Loader } from '../context';

const SCHEMA = 'webhook_ingest';

/** The WooCommerce integration of a bench company: its webhook token and signing secret, fixed like its API key. */
export function benchWebhookIntegration(clave: string): { token: string; secret: string } {
  const digest = createHash('sha256').update(`erp-bench-webhook:${clave}`).digest('hex');
  return { token: `wh_${clave}_${digest.slice(0, 32)}`, secret: `whsec_${digest.slice(32)}` };
}

/**
 * One WooCommerce integration per company (orders become sales at its first branch and
 * warehouse, on the Ticket document type, channel "En línea"), so the webhook scenario can post
 * to it. Deliveries are not bulk-loaded: the scenario's burst is what they are about.
 */
export const webhookIngestLoader: Loader = {
  schema: SCHEMA,
  async missing(client) {
    const absent = await missingTables(client, SCHEMA, ['integraciones']);
    return absent.length > 0 ? `tables ${absent.join(', ')} do not exist` : undefined;
  },
  async load({ client, companies }) {
    let id = await nextId(client, SCHEMA, 'integraciones');
    const rows = [];
    for (const company of companies) {
      // An integration issues sales: without the sales schema loaded there is nothing to point it at.
      if (!company.ventas) continue;
      const admin = company.usuarios.find((u) => u.rol === 'Administrador')!;
      const bodega = company.bodegas[0]!;
      const documento = company.ventas.documentos.find((d) => d.sucursalId === bodega.sucursalId && !d.cotizacion)!;
      const canal = company.ventas.canales.find((c) => c.nombre === 'En línea') ?? company.ventas.canales[0]!;
      const { token, secret } = benchWebhookIntegration(company.plan.clave);
      const hash = createHash('sha256').update(token, 'utf8').digest('hex');
      rows.push([
        id++,
        company.empresaId,
        'woocommerce',
        admin.id,
        bodega.sucursalId,
        bodega.id,
        documento.id,
        canal.id,
        `\\x${hash}`,
        token.slice(0, 8),
        secret,
        true,
      ]);
    }
    const count = await copyRows(
      client,
      SCHEMA,
      'integraciones',
      [
        'id',
        'empresa_id',
        'plataforma',
        'usuario_id',
        'sucursal_id',
        'bodega_id',
        'documento_id',
        'canal_id',
        'token_hash',
        'token_prefix',
        'secreto',
        'activo',
      ],
      rows,
    );
    await syncIdentity(client, SCHEMA, 'integraciones');
    return { 'webhook_ingest.integraciones': count };
  },
};
