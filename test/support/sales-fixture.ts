import type { SeedOutput } from '@erp/back-office';
import { BaseConfig, loadConfig, startService, type RunningService } from '@erp/runtime';
import { inventoryService } from '@erp/inventory';
import { type Stack, json, stackEnv } from './stack';

export const SALES_KEY_A = 'test_key_sales_a_0123456789abcdef';
export const SALES_KEY_B = 'test_key_sales_b_0123456789abcdef';
/** Company C: no active user and a key without one, so sales have no acting user. */
export const SALES_KEY_NOUSER = 'test_key_sales_c_0123456789abcdef';
/** Company D: forbids selling without stock. */
export const SALES_KEY_STRICT = 'test_key_sales_d_0123456789abcdef';

export const API = '/api/external/v1';

type RefMap = Record<string, number>;

const inv = (bodega: string, stock: number) => ({ bodega, stock, stock_minimo: 0, stock_maximo: 1000 });

function empresa(
  ref: string,
  key: string,
  options: { vender_sin_stock?: boolean; iva?: number; usuarioActivo?: boolean; keyUser?: boolean } = {},
) {
  return {
    ref,
    nombre: `Ventas ${ref.toUpperCase()}`,
    activo: true,
    vender_sin_stock: options.vender_sin_stock ?? true,
    iva: options.iva ?? 13,
    usuarios: [{ ref: 'admin', nombre: `Admin ${ref.toUpperCase()}`, rol: 'Administrador', activo: options.usuarioActivo ?? true }],
    api_keys: [{ ref: 'main', key, ...(options.keyUser === false ? {} : { usuario: 'admin' }) }],
    sucursales: [
      {
        ref: 'centro',
        nombre: 'Sucursal Centro',
        activo: true,
        bodegas: [
          { ref: 'principal', nombre: 'Bodega Principal', activo: true },
          { ref: 'reserva', nombre: 'Bodega Reserva', activo: true },
        ],
      },
      { ref: 'norte', nombre: 'Sucursal Norte', activo: true, bodegas: [{ ref: 'norte', nombre: 'Bodega Norte', activo: true }] },
    ],
    documentos: [
      { ref: 'factura', nombre: 'Factura', sucursal: 'centro', prefijo: 'FAC-', correlativo: 1, activo: true },
      { ref: 'ticket', nombre: 'Ticket', sucursal: 'centro', prefijo: '', correlativo: 1000, activo: true },
      { ref: 'cotizacion', nombre: 'Cotización', sucursal: 'centro', prefijo: 'COT-', correlativo: 1, activo: true, solo_cotizacion: true },
      { ref: 'inactivo', nombre: 'Factura antigua', sucursal: 'centro', prefijo: 'OLD-', correlativo: 1, activo: false },
      { ref: 'norte', nombre: 'Factura Norte', sucursal: 'norte', prefijo: 'FN-', correlativo: 1, activo: true },
    ],
    canales: [
      { ref: 'tienda', nombre: 'Tienda' },
      { ref: 'web', nombre: 'Tienda en línea' },
    ],
    clientes: [
      { ref: 'juan', nombre: 'Juan Pérez', email: 'juan@example.com', limite_credito: 1000 },
      { ref: 'libre', nombre: 'Ferretería Libre', limite_credito: 0 },
    ],
    productos: [
      {
        ref: 'laptop',
        nombre: 'Laptop 14',
        codigo: 'LAP-14',
        barcode: '7401000000014',
        tipo: 'Producto',
        precio: 649.99,
        costo: 480,
        costo_anterior: 470,
        costo_promedio: 475.25,
        enable: 1,
        inventarios: [inv('principal', 12), inv('norte', 4)],
      },
      {
        ref: 'mouse',
        nombre: 'Mouse',
        codigo: 'MOU-01',
        tipo: 'Producto',
        precio: 19.95,
        costo: 9.1,
        costo_anterior: 9.4,
        costo_promedio: 9.22,
        enable: 1,
        inventarios: [inv('principal', 150)],
      },
      {
        ref: 'libro',
        nombre: 'Libro de texto',
        codigo: 'LIB-01',
        tipo: 'Producto',
        precio: 12,
        costo: 8,
        costo_anterior: 8,
        costo_promedio: 8,
        enable: 1,
        porcentaje_impuesto: 0,
        inventarios: [inv('principal', 40)],
      },
      {
        ref: 'cemento',
        nombre: 'Cemento 42.5 kg',
        codigo: 'CEM-42',
        tipo: 'Producto',
        precio: 9.85,
        costo: 7,
        costo_anterior: 7,
        costo_promedio: 7,
        enable: 1,
        porcentaje_impuesto: 5,
        inventarios: [inv('principal', 100)],
      },
      {
        ref: 'instalacion',
        nombre: 'Instalación',
        codigo: 'SRV-INS',
        tipo: 'Servicio',
        precio: 25,
        costo: 0,
        costo_anterior: 0,
        costo_promedio: 0,
        enable: 1,
        inventarios: [],
      },
      {
        ref: 'viejo',
        nombre: 'Modelo descontinuado',
        codigo: 'OLD-01',
        tipo: 'Producto',
        precio: 5,
        costo: 1,
        costo_anterior: 1,
        costo_promedio: 1,
        enable: 0,
        inventarios: [inv('principal', 3)],
      },
    ],
  };
}

/**
 * Companies for the sales tests: A (sells without stock, 13 %), B (same names and codes, for
 * isolation), C (no active user, key without user) and D (forbids selling without stock).
 */
export function salesFixture(): { empresas: unknown[] } {
  return {
    empresas: [
      empresa('a', SALES_KEY_A),
      empresa('b', SALES_KEY_B),
      empresa('c', SALES_KEY_NOUSER, { usuarioActivo: false, keyUser: false }),
      empresa('d', SALES_KEY_STRICT, { vender_sin_stock: false }),
    ],
  };
}

/** The ref maps of one seeded company. */
export function refsOf(seeded: SeedOutput, empresa: string) {
  const e = seeded.empresas[empresa]!;
  const map = (kind: string) => e[kind] as RefMap;
  return {
    id: e.id,
    sucursales: map('sucursales'),
    bodegas: map('bodegas'),
    productos: map('productos'),
    documentos: map('documentos'),
    canales: map('canales'),
    clientes: map('clientes'),
  };
}
export type SalesRefs = ReturnType<typeof refsOf>;

/** A valid POST /sales body for company refs: one laptop at list price, Completada, Factura, Tienda. */
export function saleBody(refs: SalesRefs, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    fecha: '2026-03-10',
    estado: 'Completada',
    id_sucursal: refs.sucursales.centro,
    id_bodega: refs.bodegas.principal,
    id_documento: refs.documentos.factura,
    id_canal: refs.canales.tienda,
    detalles: [{ id_producto: refs.productos.laptop, cantidad: 1 }],
    ...overrides,
  };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function postSale(stack: Stack, key: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await stack.api(`${API}/sales`, {
    key,
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await json(res) };
}

/** Σ movements of the ledger for a product in a warehouse: must equal its stock. */
export async function ledgerOf(stack: Stack, productoId: number, bodegaId: number): Promise<{ stock: string; movimientos: number }> {
  const [row] = await stack.query<{ stock: string; movimientos: number }>(
    'select coalesce(sum(cantidad), 0)::numeric(18,3)::text as stock, count(*)::int as movimientos from inventory.movimientos where producto_id = $1 and bodega_id = $2',
    [productoId, bodegaId],
  );
  return row!;
}

/** A snapshot of everything a refused request must leave untouched. */
export async function dataSnapshot(stack: Stack): Promise<unknown> {
  const [row] = await stack.query(`select
      (select count(*)::int from sales.ventas) as ventas,
      (select count(*)::int from sales.venta_detalles) as detalles,
      (select coalesce(string_agg(id || ':' || correlativo, ',' order by id), '') from sales.documentos) as correlativos,
      (select count(*)::int from sales.outbox) as eventos,
      (select count(*)::int from inventory.movimientos) as movimientos,
      (select count(*)::int from inventory.reservas) as reservas,
      (select coalesce(sum(stock), 0)::text from inventory.inventarios) as stock`);
  return row;
}

/**
 * The gateway's settings for a test that kills the service answering a request: that request is
 * answered 504 at the gateway's timeout, so a crash test waits 5 s for it rather than the stack's 15.
 */
export const CRASH_GATEWAY = { REQUEST_TIMEOUT_MS: '5000' };

/**
 * Starts (or restarts) the stack's inventory in this process with a short reservation sweep,
 * so an orphaned reservation is resolved within a second or two instead of a minute.
 */
export async function startFastSweepingInventory(
  stack: Stack,
  timeouts: { reservationMs: number; sweepMs: number; checkMs: number },
): Promise<void> {
  await stack.stopService('inventory');
  const base = loadConfig(BaseConfig, stackEnv(stack.iso));
  const service = await startService(
    inventoryService({
      ...base,
      RESERVATION_TIMEOUT_MS: timeouts.reservationMs,
      RESERVATION_SWEEP_INTERVAL_MS: timeouts.sweepMs,
      RESERVATION_CHECK_TIMEOUT_MS: timeouts.checkMs,
    }),
    { migrateOnStart: true },
  );
  stack.running.set('inventory', service as unknown as RunningService<BaseConfig>);
}
