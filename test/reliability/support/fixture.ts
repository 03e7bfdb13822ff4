import type { SeedOutput, WebhookToken } from '@erp/back-office';

/**
 * Companies for the reliability suites. A and B are lookalikes: the same branch, warehouse,
 * document, channel, customer and product names and codes, the same sale references and the
 * same advisor codes, so a leak between tenants cannot hide behind different values. S forbids
 * selling without stock and has little of it, so concurrent sales fight over the last units.
 */
export const RELIABILITY_KEYS = {
  a: 'test_key_reliability_a_0123456789abcdef',
  b: 'test_key_reliability_b_0123456789abcdef',
  s: 'test_key_reliability_s_0123456789abcdef',
} as const;
export type CompanyRef = keyof typeof RELIABILITY_KEYS;

export const WOO_SECRET = 'wc_secret_reliability_5e6f';

/** Opening stock of every product in company S's main warehouse. */
export const STRICT_STOCK = 40;

const inv = (bodega: string, stock: number) => ({ bodega, stock, stock_minimo: 5, stock_maximo: 100_000 });

/** The next number of each document type as seeded, by name: correlatives must run gapless from there. */
export const INITIAL_CORRELATIVES: Record<string, number> = { Factura: 1, Ticket: 1000, Cotización: 1, 'Pedido web': 1 };

/** Products sold by the load: codes double as platform SKUs, so webhook orders find them. */
export const PRODUCT_REFS = ['laptop', 'mouse', 'libro', 'cemento', 'cable'] as const;

/** Code, name and price of each product the load sells, as seeded (platform updates send the same). */
export const SOLD_PRODUCTS: Record<(typeof PRODUCT_REFS)[number], { codigo: string; nombre: string; precio: number }> = {
  laptop: { codigo: 'LAP-14', nombre: 'Laptop 14', precio: 649.99 },
  mouse: { codigo: 'MOU-01', nombre: 'Mouse', precio: 19.95 },
  libro: { codigo: 'LIB-01', nombre: 'Libro de texto', precio: 12 },
  cemento: { codigo: 'CEM-42', nombre: 'Cemento 42.5 kg', precio: 9.85 },
  cable: { codigo: 'CAB-02', nombre: 'Cable HDMI 2m', precio: 8.5 },
};

interface FixtureOptions {
  strict?: boolean;
  /** false: leave out what only the sales, returns and webhook-ingest services load (for stacks without them). */
  sales?: boolean;
}

function empresa(ref: CompanyRef, options: FixtureOptions = {}) {
  const stock = (n: number) => (options.strict ? STRICT_STOCK : n);
  return {
    ref,
    nombre: ref === 's' ? 'Empresa Estricta' : `Empresa ${ref.toUpperCase()}`,
    activo: true,
    vender_sin_stock: !options.strict,
    iva: 13,
    usuarios: [
      { ref: 'admin', nombre: 'Admin', rol: 'Administrador', activo: true },
      { ref: 'asesor', nombre: 'Asesora Uno', rol: 'Vendedor', codigo: 'AS-01', activo: true },
    ],
    api_keys: [{ ref: 'main', usuario: 'admin', key: RELIABILITY_KEYS[ref] }],
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
    productos: [
      {
        ref: 'laptop',
        ...SOLD_PRODUCTS.laptop,
        barcode: '7401000000014',
        categoria: 'Electrónicos',
        marca: 'Acer',
        tipo: 'Producto',
        costo: 480,
        costo_anterior: 470,
        costo_promedio: 475.25,
        enable: 1,
        inventarios: [inv('principal', stock(5_000)), inv('norte', stock(400))],
      },
      {
        ref: 'mouse',
        ...SOLD_PRODUCTS.mouse,
        categoria: 'Accesorios',
        marca: 'Logitech',
        tipo: 'Producto',
        costo: 9.1,
        costo_anterior: 9.4,
        costo_promedio: 9.22,
        enable: 1,
        inventarios: [inv('principal', stock(20_000))],
      },
      {
        ref: 'libro',
        ...SOLD_PRODUCTS.libro,
        tipo: 'Producto',
        costo: 8,
        costo_anterior: 8,
        costo_promedio: 8,
        enable: 1,
        porcentaje_impuesto: 0,
        inventarios: [inv('principal', stock(10_000))],
      },
      {
        ref: 'cemento',
        ...SOLD_PRODUCTS.cemento,
        tipo: 'Producto',
        costo: 7,
        costo_anterior: 7,
        costo_promedio: 7,
        enable: 1,
        porcentaje_impuesto: 5,
        inventarios: [inv('principal', stock(10_000)), inv('reserva', stock(500))],
      },
      {
        ref: 'cable',
        ...SOLD_PRODUCTS.cable,
        categoria: 'Accesorios',
        tipo: 'Producto',
        costo: 2.1,
        costo_anterior: 2.1,
        costo_promedio: 2.1,
        enable: 1,
        inventarios: [inv('principal', stock(10_000))],
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
    ],
    ...(options.sales === false ? {} : salesSections()),
  };
}

/** Document types, channels, customers, sales, returns and integrations: loaded by the sales, returns and webhook-ingest services. */
function salesSections() {
  return {
    documentos: [
      { ref: 'factura', nombre: 'Factura', sucursal: 'centro', prefijo: 'FAC-', correlativo: 1, activo: true },
      { ref: 'ticket', nombre: 'Ticket', sucursal: 'centro', prefijo: '', correlativo: 1000, activo: true },
      { ref: 'cotizacion', nombre: 'Cotización', sucursal: 'centro', prefijo: 'COT-', correlativo: 1, activo: true, solo_cotizacion: true },
      { ref: 'web', nombre: 'Pedido web', sucursal: 'centro', prefijo: 'WEB-', correlativo: 1, activo: true },
    ],
    canales: [
      { ref: 'tienda', nombre: 'Tienda' },
      { ref: 'web', nombre: 'Tienda en línea' },
    ],
    clientes: [
      { ref: 'juan', nombre: 'Juan Pérez', email: 'juan@example.com', limite_credito: 0 },
      { ref: 'libre', nombre: 'Ferretería Libre', limite_credito: 0 },
    ],
    ventas: [
      // The same references in A and B: each company must only ever see its own.
      {
        ref: 'v1',
        fecha: '2026-01-15',
        estado: 'Completada',
        sucursal: 'centro',
        bodega: 'principal',
        documento: 'factura',
        canal: 'tienda',
        referencia_externa: 'REF-1',
        detalles: [{ producto: 'mouse', cantidad: 2 }],
      },
      {
        ref: 'v2',
        fecha: '2026-01-16',
        estado: 'Pendiente',
        sucursal: 'centro',
        bodega: 'principal',
        documento: 'factura',
        canal: 'tienda',
        cliente: 'juan',
        referencia_externa: 'REF-2',
        detalles: [{ producto: 'cable', cantidad: 1 }],
      },
      {
        ref: 'v3',
        fecha: '2026-01-17',
        estado: 'Cotizacion',
        sucursal: 'centro',
        bodega: 'principal',
        documento: 'cotizacion',
        referencia_externa: 'REF-3',
        detalles: [{ producto: 'libro', cantidad: 3 }],
      },
    ],
    // A return in each company, so the returns endpoints have something to leak.
    devoluciones: [{ ref: 'd1', venta: 'v1', fecha: '2026-01-20', tipo: 'devolucion', detalles: [{ producto: 'mouse', cantidad: 1 }] }],
    integraciones: [
      {
        ref: 'woo',
        plataforma: 'woocommerce',
        usuario: 'admin',
        sucursal: 'centro',
        bodega: 'principal',
        documento: 'web',
        canal: 'web',
        secreto: WOO_SECRET,
      },
      { ref: 'shop', plataforma: 'shopify', usuario: 'admin', sucursal: 'centro', bodega: 'principal', documento: 'web', canal: 'web' },
    ],
  };
}

export function reliabilityFixture(options: { sales?: boolean } = {}): unknown {
  return { empresas: [empresa('a', options), empresa('b', options), empresa('s', { ...options, strict: true })] };
}

type RefMap = Record<string, number>;

/** One seeded company as the suites use it. */
export interface Company {
  ref: CompanyRef;
  id: number;
  key: string;
  sucursales: RefMap;
  bodegas: RefMap;
  productos: RefMap;
  documentos: RefMap;
  canales: RefMap;
  clientes: RefMap;
  ventas: RefMap;
  devoluciones: RefMap;
  integraciones: Record<string, WebhookToken>;
}

export function companiesOf(seeded: SeedOutput): Record<CompanyRef, Company> {
  const company = (ref: CompanyRef): Company => {
    const e = seeded.empresas[ref]!;
    const map = (kind: string) => (e[kind] ?? {}) as RefMap;
    return {
      ref,
      id: e.id,
      key: RELIABILITY_KEYS[ref],
      sucursales: map('sucursales'),
      bodegas: map('bodegas'),
      productos: map('productos'),
      documentos: map('documentos'),
      canales: map('canales'),
      clientes: map('clientes'),
      ventas: map('ventas'),
      devoluciones: map('devoluciones'),
      integraciones: (e.integraciones ?? {}) as Record<string, WebhookToken>,
    };
  };
  return { a: company('a'), b: company('b'), s: company('s') };
}
