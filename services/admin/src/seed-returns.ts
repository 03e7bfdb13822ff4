import { z } from 'zod';
import type { Bus } from '@erp/bus';
import { ROLES, returnsAdminSubjects, type RequestContext } from '@erp/contracts';
import { refOf, type RefMap } from './refs';

const Devolucion = z.object({
  ref: z.string().min(1),
  venta: z.string().min(1),
  fecha: z.string(),
  tipo: z.string(),
  observaciones: z.string().optional(),
  /** A document type of the fixture: the return's series takes its name, prefix and next number. */
  documento: z.string().min(1).optional(),
  detalles: z.array(z.object({ producto: z.string().min(1), cantidad: z.number(), precio: z.number().optional() })).default([]),
  anulada: z.boolean().optional(),
});

/** The returns part of one company of a fixture, as the loader reads it. */
export const ReturnsSections = z.object({
  usuarios: z
    .array(z.object({ ref: z.string(), nombre: z.string(), rol: z.enum(ROLES), activo: z.boolean().default(true) }).passthrough())
    .default([]),
  documentos: z
    .array(
      z
        .object({ ref: z.string(), nombre: z.string(), prefijo: z.string().optional(), correlativo: z.number().int().optional() })
        .passthrough(),
    )
    .default([]),
  devoluciones: z.array(Devolucion).default([]),
});

/**
 * Seeds a company's returns through `returns.admin.create` (the back-office path: lines priced
 * from the sale, stock back except for `descuento_ajuste`), made by the company's first active
 * administrator, then annuls those the fixture marks. Runs after the sales; returns the ref map.
 */
export async function seedReturns(
  bus: Bus,
  empresaId: number,
  empresa: unknown,
  refs: Record<string, RefMap>,
  ctx: RequestContext,
): Promise<Record<string, RefMap>> {
  const sections = ReturnsSections.parse(empresa);
  if (sections.devoluciones.length === 0) return {};
  const admin = sections.usuarios.find((u) => u.rol === 'Administrador' && u.activo);
  const usuario = admin && refs.usuarios?.[admin.ref] !== undefined ? { id: refs.usuarios[admin.ref]!, nombre: admin.nombre } : null;
  const devoluciones: RefMap = {};
  for (const d of sections.devoluciones) {
    const where = `devolución ${d.ref}`;
    if (devoluciones[d.ref] !== undefined) throw new Error(`${where}: la ref está repetida`);
    const documento = d.documento !== undefined ? sections.documentos.find((doc) => doc.ref === d.documento) : undefined;
    if (d.documento !== undefined && !documento) throw new Error(`${where}: no existe documento con ref "${d.documento}"`);
    const { devolucion } = await bus.request(
      returnsAdminSubjects,
      'returns.admin.create',
      {
        empresa_id: empresaId,
        id_venta: refOf(refs.ventas, 'venta', d.venta, where),
        fecha: d.fecha,
        tipo: d.tipo as never,
        observaciones: d.observaciones,
        usuario,
        ...(documento
          ? { documento: { nombre: documento.nombre, prefijo: documento.prefijo ?? '', correlativo: documento.correlativo } }
          : {}),
        detalles: d.detalles.map(({ producto, ...line }, i) => ({
          ...line,
          id_producto: refOf(refs.productos, 'producto', producto, `${where}, línea ${i}`),
        })),
      },
      ctx,
    );
    devoluciones[d.ref] = devolucion.id;
    if (d.anulada)
      await bus.request(returnsAdminSubjects, 'returns.admin.annul', { empresa_id: empresaId, id_devolucion: devolucion.id }, ctx);
  }
  return { devoluciones };
}
