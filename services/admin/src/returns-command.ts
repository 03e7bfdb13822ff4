import type { Bus } from '@erp/bus';
import { returnsAdminSubjects, webhookGatewaySubjects, type RequestContext } from '@erp/contracts';

export const RETURNS_USAGE = `  returns create EMPRESA_ID ID_VENTA FECHA TIPO [ID_PRODUCTO:CANTIDAD[:PRECIO]...]
         [--linea ID_DETALLE:CANTIDAD[:PRECIO]]... [--observaciones TEXT] [--referencia REF] [--usuario USUARIO_ID]
                                  return part of a sale (TIPO devolucion, descuento_ajuste or anulacion_factura;
                                  anulacion_factura without lines returns all that is left); stock goes back
                                  except for descuento_ajuste; --referencia makes a retry answer the same return
  returns annul EMPRESA_ID ID_DEVOLUCION
                                  annul a return (its stock movement is reversed once)`;

const positive = (value: string | undefined, what: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${what} must be a positive integer`);
  return n;
};

/** `ID:CANTIDAD[:PRECIO]` → the line's id, quantity and optional credited price. */
function line(token: string): { id: number; cantidad: number; precio?: number } {
  const [id, cantidad, precio] = token.split(':');
  const qty = Number(cantidad);
  if (!cantidad || !Number.isFinite(qty)) throw new Error(`"${token}" must be ID:CANTIDAD[:PRECIO]`);
  const price = precio === undefined ? undefined : Number(precio);
  if (price !== undefined && !Number.isFinite(price)) throw new Error(`"${token}": PRECIO must be a number`);
  return { id: positive(id, `"${token}": ID`), cantidad: qty, ...(price !== undefined ? { precio: price } : {}) };
}

/** `returns create …` and `returns annul …` of the admin CLI. */
export async function returnsCommand(bus: Bus, args: readonly string[], ctx: RequestContext): Promise<unknown> {
  const [sub, ...rest] = args;
  if (sub === 'annul') {
    return bus.request(
      returnsAdminSubjects,
      'returns.admin.annul',
      { empresa_id: positive(rest[0], 'EMPRESA_ID'), id_devolucion: positive(rest[1], 'ID_DEVOLUCION') },
      ctx,
    );
  }
  if (sub !== 'create') throw new Error('returns needs create or annul');
  const [empresa, venta, fecha, tipo, ...tokens] = rest;
  if (!fecha || !tipo) throw new Error(`returns create needs EMPRESA_ID ID_VENTA FECHA TIPO\n\n${RETURNS_USAGE}`);
  const empresaId = positive(empresa, 'EMPRESA_ID');
  const detalles: Array<{ id_producto?: number; id_detalle?: number; cantidad: number; precio?: number }> = [];
  const options: Record<string, string> = {};
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (!token.startsWith('--')) {
      const { id, ...rest } = line(token);
      detalles.push({ id_producto: id, ...rest });
      continue;
    }
    const value = tokens[++i];
    if (value === undefined) throw new Error(`${token} needs a value`);
    if (token === '--linea') {
      const { id, ...rest } = line(value);
      detalles.push({ id_detalle: id, ...rest });
    } else if (['--observaciones', '--referencia', '--usuario'].includes(token)) options[token.slice(2)] = value;
    else throw new Error(`Unknown option ${token}`);
  }
  let usuario: { id: number; nombre: string } | null = null;
  if (options.usuario !== undefined) {
    const found = await bus.request(
      webhookGatewaySubjects,
      'gateway.webhook.context',
      { empresa_id: empresaId, usuario_id: positive(options.usuario, 'USUARIO_ID') },
      ctx,
    );
    if (!found.usuario) throw new Error(`The company ${empresaId} has no user ${options.usuario}`);
    usuario = found.usuario;
  }
  return bus.request(
    returnsAdminSubjects,
    'returns.admin.create',
    {
      empresa_id: empresaId,
      id_venta: positive(venta, 'ID_VENTA'),
      fecha,
      tipo: tipo as never,
      usuario,
      detalles,
      ...(options.observaciones !== undefined ? { observaciones: options.observaciones } : {}),
      ...(options.referencia !== undefined ? { referencia: options.referencia } : {}),
    },
    ctx,
  );
}
