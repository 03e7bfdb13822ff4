import { recordResponse } from './recording';

/**
 * A fixture of one online store: a company with one administrator and API key, one branch and
 * warehouse, a Ticket document, a web channel, its products and its platform integrations (on
 * that branch, warehouse, document and channel).
 */
export function webhookStore(input: {
  nombre: string;
  key: string;
  vender_sin_stock: boolean;
  productos: unknown[];
  integraciones: Array<{ ref: string; plataforma: 'woocommerce' | 'shopify'; secreto?: string; tienda?: Record<string, string> }>;
}): unknown {
  return {
    empresas: [
      {
        ref: 'tienda',
        nombre: input.nombre,
        vender_sin_stock: input.vender_sin_stock,
        usuarios: [{ ref: 'admin', nombre: 'Admin Tienda', rol: 'Administrador' }],
        api_keys: [{ ref: 'main', usuario: 'admin', key: input.key }],
        sucursales: [{ ref: 'centro', nombre: 'Sucursal Centro', bodegas: [{ ref: 'principal', nombre: 'Bodega Principal' }] }],
        documentos: [{ ref: 'ticket', nombre: 'Ticket', sucursal: 'centro', prefijo: 'T-', correlativo: 1, activo: true }],
        canales: [{ ref: 'web', nombre: 'Tienda en línea' }],
        productos: input.productos,
        integraciones: input.integraciones.map((i) => ({
          ...i,
          usuario: 'admin',
          sucursal: 'centro',
          bodega: 'principal',
          documento: 'ticket',
          canal: 'web',
        })),
      },
    ],
  };
}

/** Posts a delivery to the gateway. */
export async function deliver(baseUrl: string, path: string, body: string, headers: Record<string, string>): Promise<Response> {
  const res = await fetch(`${baseUrl}${path}`, { method: 'POST', body, headers });
  recordResponse(`${baseUrl}${path}`, 'POST', res, body);
  return res;
}
