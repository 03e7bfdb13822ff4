import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { API_BASE } from '@erp/contracts';
import type { SeedOutput } from '@erp/back-office';
import { Stack, json } from '../support/stack';

const KEY_A = 'demo_4f9c2b7e1a6d8305c2e9b1f7a4d6c8e0';
const KEY_B = 'lookups_key_company_b_0123456789abcd';

type Empresa = Record<string, unknown> & { sucursales: Array<Record<string, unknown>> };

/**
 * The demo company, with something retired of each kind (which no lookup lists), beside another
 * company whose branches, documents, channels and customers have the same names, emails and
 * document numbers: a lookup answering any of them would show.
 */
function fixture(): unknown {
  const demo = (JSON.parse(readFileSync(join(__dirname, '../fixtures/demo.json'), 'utf8')) as { empresas: Empresa[] }).empresas[0]!;
  // Its sales, returns and integrations need services these lookups do not.
  const { integraciones: _i, ventas: _v, devoluciones: _d, ...a } = demo;
  const retired = {
    sucursales: [
      ...a.sucursales.map((s) =>
        s.ref === 'norte' ? { ...s, bodegas: [...(s.bodegas as unknown[]), { ref: 'vieja', nombre: 'Bodega Vieja', activo: false }] } : s,
      ),
      { ref: 'cerrada', nombre: 'Sucursal Cerrada', activo: false, bodegas: [{ ref: 'cerrada', nombre: 'Bodega Cerrada', activo: true }] },
    ],
    documentos: [...(a.documentos as unknown[]), { ref: 'viejo', nombre: 'Recibo', sucursal: 'centro', prefijo: 'R-', activo: false }],
    canales: [...(a.canales as unknown[]), { ref: 'catalogo', nombre: 'Catálogo impreso', activo: false }],
    clientes: [
      ...(a.clientes as unknown[]),
      { ref: 'antiguo', nombre: 'Juan Antiguo', email: 'antiguo@example.com', numero_documento: '04567890-9', activo: false },
      { ref: 'porcentaje', nombre: 'Descuentos 100% Reales', email: 'ventas@descuentos.example' },
    ],
  };
  const b = {
    ref: 'b',
    clave: 'lookups-b',
    nombre: 'Otra Empresa',
    activo: true,
    usuarios: [{ ref: 'admin', nombre: 'Admin B', rol: 'Administrador', activo: true }],
    api_keys: [{ ref: 'main', usuario: 'admin', key: KEY_B }],
    sucursales: [{ ref: 'centro', nombre: 'Sucursal Centro', activo: true, bodegas: [{ ref: 'principal', nombre: 'Bodega Principal' }] }],
    documentos: [{ ref: 'factura', nombre: 'Factura', sucursal: 'centro', prefijo: 'FAC-' }],
    canales: [{ ref: 'tienda', nombre: 'Tienda' }],
    clientes: [{ ref: 'juan', nombre: 'Juan Pérez', email: 'juan.perez@example.com', numero_documento: '04567890-1' }],
  };
  return { empresas: [{ ...a, ...retired }, b] };
}

describe('lookups: branches, document types, channels and customers', () => {
  let stack: Stack;
  let seeded: SeedOutput;
  const refs = (empresa: string, kind: string) => seeded.empresas[empresa]![kind] as Record<string, number>;
  const read = async (path: string, key = KEY_A) => {
    const res = await stack.api(`${API_BASE}${path}`, { key });
    return { status: res.status, body: await json(res) };
  };

  beforeAll(async () => {
    stack = await Stack.start({ services: ['gateway', 'inventory', 'sales'] });
    seeded = await stack.seed(fixture());
  });
  afterAll(() => stack.stop());

  it('lists the active branches with their active warehouses, by name, of the key’s company only', async () => {
    const sucursales = refs('demo', 'sucursales');
    const bodegas = refs('demo', 'bodegas');
    const { status, body } = await read('/branches');
    expect(status).toBe(200);
    expect(body.data).toEqual([
      {
        id: sucursales.centro,
        nombre: 'Sucursal Centro',
        bodegas: [
          { id: bodegas.principal, nombre: 'Bodega Principal' },
          { id: bodegas.reserva, nombre: 'Bodega Reserva' },
        ],
      },
      { id: sucursales.norte, nombre: 'Sucursal Norte', bodegas: [{ id: bodegas.norte, nombre: 'Bodega Norte' }] },
    ]);
    expect(body.meta).toMatchObject({ empresa: 'Comercial La Esperanza S.A. de C.V.', filters_applied: {} });
    const other = await read('/branches', KEY_B);
    expect(other.body.data).toEqual([
      {
        id: refs('b', 'sucursales').centro,
        nombre: 'Sucursal Centro',
        bodegas: [{ id: refs('b', 'bodegas').principal, nombre: 'Bodega Principal' }],
      },
    ]);
  });

  it('lists the active document types with their branch, and whether they are for quotations only', async () => {
    const documentos = refs('demo', 'documentos');
    const sucursales = refs('demo', 'sucursales');
    const { status, body } = await read('/document-types');
    expect(status).toBe(200);
    expect(body.data).toEqual([
      { id: documentos.cotizacion, nombre: 'Cotización', prefijo: 'COT-', id_sucursal: sucursales.centro, solo_cotizacion: true },
      { id: documentos.factura, nombre: 'Factura', prefijo: 'FAC-', id_sucursal: sucursales.centro, solo_cotizacion: false },
      { id: documentos.ticket, nombre: 'Ticket', prefijo: '', id_sucursal: sucursales.centro, solo_cotizacion: false },
      { id: documentos.factura_norte, nombre: 'Factura', prefijo: 'FN-', id_sucursal: sucursales.norte, solo_cotizacion: false },
    ]);
    expect((await read('/document-types', KEY_B)).body.data.map((d: { id: number }) => d.id)).toEqual([refs('b', 'documentos').factura]);
  });

  it('lists the active channels by name', async () => {
    const canales = refs('demo', 'canales');
    expect((await read('/channels')).body.data).toEqual([
      { id: canales.tienda, nombre: 'Tienda' },
      { id: canales.web, nombre: 'Tienda en línea' },
    ]);
    expect((await read('/channels', KEY_B)).body.data).toEqual([{ id: refs('b', 'canales').tienda, nombre: 'Tienda' }]);
  });

  it('pages the active customers by name, each with its email, document number and credit limit', async () => {
    const clientes = refs('demo', 'clientes');
    const first = await read('/customers?per_page=2');
    expect(first.status).toBe(200);
    expect(first.body.data).toEqual([
      {
        id: clientes.porcentaje,
        nombre: 'Descuentos 100% Reales',
        email: 'ventas@descuentos.example',
        numero_documento: null,
        limite_credito: 0,
      },
      {
        id: clientes.ferreteria,
        nombre: 'Ferretería El Clavo',
        email: 'compras@elclavo.example',
        numero_documento: '0614-250190-101-3',
        limite_credito: 0,
      },
    ]);
    expect(first.body.pagination).toMatchObject({ current_page: 1, per_page: 2, total: 3, total_pages: 2, has_next: true });
    const second = await read('/customers?per_page=2&page=2');
    expect(second.body.data).toEqual([
      { id: clientes.juan, nombre: 'Juan Pérez', email: 'juan.perez@example.com', numero_documento: '04567890-1', limite_credito: 1500 },
    ]);
  });

  it('finds a customer by its email whatever its case, and by part of its name or document number', async () => {
    const clientes = refs('demo', 'clientes');
    const ids = async (query: string, key = KEY_A) => (await read(`/customers?${query}`, key)).body.data.map((c: { id: number }) => c.id);
    const byEmail = await read('/customers?email=Juan.Perez@Example.COM');
    expect(byEmail.body.data.map((c: { id: number }) => c.id)).toEqual([clientes.juan]);
    expect(byEmail.body.meta.filters_applied).toEqual({ email: 'juan.perez@example.com' });
    expect(await ids('q=p%C3%A9rez')).toEqual([clientes.juan]);
    expect(await ids('q=0614-2501')).toEqual([clientes.ferreteria]);
    expect(await ids('q=04567890')).toEqual([clientes.juan]); // the retired customer with a like number is not listed
    // `%` and `_` are the characters typed, not wildcards.
    expect(await ids('q=100%25')).toEqual([clientes.porcentaje]);
    expect(await ids('q=_')).toEqual([]);
    expect(await ids('email=antiguo@example.com')).toEqual([]);
    expect(await ids('email=juan.perez@example.com', KEY_B)).toEqual([refs('b', 'clientes').juan]);
    expect(await ids('q=ferreter')).toEqual([clientes.ferreteria]);
    expect(await ids('q=ferreter', KEY_B)).toEqual([]);
  });

  it('refuses bad paging and overlong filters with 400 naming them', async () => {
    const res = await read('/customers?per_page=0&q=' + 'x'.repeat(101));
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.details).sort()).toEqual(['per_page', 'q']);
  });

  it('counts every lookup against the quota like any read', async () => {
    const remaining = async (path: string) =>
      Number((await stack.api(`${API_BASE}${path}`, { key: KEY_A })).headers.get('x-ratelimit-remaining'));
    const before = await remaining('/channels');
    expect(await remaining('/branches')).toBe(before - 1);
    expect(await remaining('/document-types')).toBe(before - 2);
    expect(await remaining('/customers')).toBe(before - 3);
  });
});
