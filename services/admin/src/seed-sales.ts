import { z } from 'zod';
import type { Bus } from '@erp/bus';
import { ROLES, salesAdminSubjects, salesApiSubjects, type RequestContext, type TenantContext } from '@erp/contracts';
import { refOf, type RefMap } from './refs';

const Documento = z.object({
  ref: z.string().min(1),
  nombre: z.string().min(1),
  sucursal: z.string().min(1),
  prefijo: z.string().optional(),
  correlativo: z.number().int().min(0).optional(),
  activo: z.boolean().default(true),
  solo_cotizacion: z.boolean().optional(),
});

const Venta = z.object({
  ref: z.string().min(1),
  fecha: z.string(),
  estado: z.string(),
  sucursal: z.string().min(1),
  bodega: z.string().min(1),
  documento: z.string().min(1),
  canal: z.string().min(1).optional(),
  cliente: z.string().min(1).optional(),
  forma_pago: z.string().optional(),
  referencia_externa: z.string().optional(),
  observaciones: z.string().optional(),
  fecha_expiracion: z.string().optional(),
  monto_pago: z.number().optional(),
  cambio: z.number().optional(),
  detalles: z.array(
    z.object({
      producto: z.string().min(1),
      cantidad: z.number(),
      precio: z.number().optional(),
      descuento: z.number().optional(),
      porcentaje_impuesto: z.number().optional(),
    }),
  ),
  documento_fiscal_emitido: z.boolean().optional(),
  anulada: z.boolean().optional(),
});

/** The sales part of one company of a fixture, as the loader reads it. */
export const SalesSections = z.object({
  nombre: z.string(),
  iva: z.number(),
  vender_sin_stock: z.boolean(),
  usuarios: z
    .array(z.object({ ref: z.string(), nombre: z.string(), rol: z.enum(ROLES), activo: z.boolean().default(true) }).passthrough())
    .default([]),
  documentos: z.array(Documento).default([]),
  canales: z.array(z.object({ ref: z.string().min(1), nombre: z.string().min(1) }).passthrough()).default([]),
  clientes: z.array(z.object({ ref: z.string().min(1) }).passthrough()).default([]),
  ventas: z.array(Venta).default([]),
});

/**
 * Seeds a company's document types, channels and customers through `sales.admin.seed`, then its
 * sales through `sales.create` (the invoicing pipeline of POST /sales: stock, tax, correlatives)
 * acting as the company's first active administrator, then marks fiscal documents and annuls
 * what the fixture says. Returns the new ref maps.
 */
export async function seedSales(
  bus: Bus,
  empresaId: number,
  empresa: unknown,
  refs: Record<string, RefMap>,
  ctx: RequestContext,
): Promise<Record<string, RefMap>> {
  const sections = SalesSections.parse(empresa);
  // A company without sales sections needs no sales service (tests of other services run without it).
  if (sections.documentos.length + sections.canales.length + sections.clientes.length + sections.ventas.length === 0) return {};
  const seeded = await bus.request(
    salesAdminSubjects,
    'sales.admin.seed',
    {
      empresa_id: empresaId,
      documentos: sections.documentos.map(({ sucursal, ...d }) => ({
        ...d,
        id_sucursal: refOf(refs.sucursales, 'sucursal', sucursal, `documento ${d.ref}`)!,
      })),
      canales: sections.canales as never,
      clientes: sections.clientes as never,
    },
    ctx,
  );
  const all: Record<string, RefMap> = { ...refs, ...seeded };
  const ventas: RefMap = {};
  if (sections.ventas.length === 0) return { ...seeded, ventas };

  const admin = sections.usuarios.find((u) => u.rol === 'Administrador' && u.activo);
  const tenant: TenantContext = {
    requestId: ctx.requestId,
    empresa: { id: empresaId, nombre: sections.nombre, iva: String(sections.iva), venderSinStock: sections.vender_sin_stock },
    usuario: admin ? { id: refOf(refs.usuarios, 'usuario', admin.ref, 'ventas')!, nombre: admin.nombre } : null,
  };
  for (const v of sections.ventas) {
    const where = `venta ${v.ref}`;
    const { venta } = await bus.request(
      salesApiSubjects,
      'sales.create',
      {
        fecha: v.fecha,
        estado: v.estado as never,
        id_sucursal: refOf(all.sucursales, 'sucursal', v.sucursal, where),
        id_bodega: refOf(all.bodegas, 'bodega', v.bodega, where)!,
        id_documento: refOf(all.documentos, 'documento', v.documento, where)!,
        id_canal: refOf(all.canales, 'canal', v.canal, where),
        id_cliente: refOf(all.clientes, 'cliente', v.cliente, where),
        forma_pago: v.forma_pago,
        referencia_externa: v.referencia_externa,
        observaciones: v.observaciones,
        fecha_expiracion: v.fecha_expiracion,
        monto_pago: v.monto_pago,
        cambio: v.cambio,
        origen: 'fixture',
        detalles: v.detalles.map(({ producto, ...d }, i) => ({
          ...d,
          id_producto: refOf(all.productos, 'producto', producto, `${where}, línea ${i}`)!,
        })),
      },
      tenant,
    );
    ventas[v.ref] = venta.id;
    if (v.documento_fiscal_emitido)
      await bus.request(salesAdminSubjects, 'sales.admin.fiscal-emitted', { empresa_id: empresaId, id_venta: venta.id }, ctx);
    if (v.anulada) await bus.request(salesAdminSubjects, 'sales.admin.annul', { empresa_id: empresaId, id_venta: venta.id }, ctx);
  }
  return { ...seeded, ventas };
}
