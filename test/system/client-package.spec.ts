import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { TestReceiver } from '../../services/subscriptions/test/receiver';
import { API, SALES_KEY_A, refsOf, salesFixture, type SalesRefs } from '../support/sales-fixture';
import { Stack, json } from '../support/stack';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
/** The TypeScript of this checkout, as a partner's own would check its code. */
const TSC = path.join(ROOT, 'node_modules/typescript/bin/tsc');

/** What a partner's program does with the installed package: one read, and one delivery verified. */
const PARTNER_PROGRAM = `
import { DeliveryVerificationError, PartnerApiClient, verifyDelivery } from '@erp/client';

const { BASE_URL, API_KEY, SECRET, DELIVERY } = process.env;
const api = new PartnerApiClient({ baseUrl: BASE_URL, apiKey: API_KEY });
const { status, body } = await api.get('/sales/{id}', { path: { id: Number(process.env.SALE_ID) } });
const delivery = JSON.parse(DELIVERY);
const event = verifyDelivery(SECRET, delivery.body, delivery.headers);
let forged;
try {
  verifyDelivery(SECRET, delivery.body.replace('"sale.created"', '"sale.annulled"'), delivery.headers);
} catch (err) {
  forged = err instanceof DeliveryVerificationError ? err.name : String(err);
}
console.log(JSON.stringify({ status, correlativo: body.data.correlativo, event: { type: event.type, id: event.data.id }, forged }));
`;

/** The same in TypeScript, checked against the package's own declarations (strict, Node's ESM resolution). */
const PARTNER_TYPES = `
import { ApiError, PartnerApiClient, verifyDelivery, type DeliveredEvent, type PartnerEvent, type components } from '@erp/client';

const api = new PartnerApiClient({ baseUrl: 'http://localhost:8080/api/external/v1', apiKey: 'key' });
export async function total(id: number): Promise<number> {
  const { body } = await api.get('/sales/{id}', { path: { id } });
  return body.data.total;
}
export const event: DeliveredEvent = verifyDelivery('whsec_x', '{}', {});
// The feed's item is its own type, without the test delivery.
// @ts-expect-error a logged event is never a ping
export const logged: PartnerEvent['type'] = 'ping';
export const sale: components['schemas']['Sale'] | undefined = undefined;
export const isApiError = (err: unknown): boolean => err instanceof ApiError;
// An event's data narrows by its type, as delivered and as GET /events lists it.
export function cause(e: PartnerEvent): string {
  switch (e.type) {
    case 'sale.created':
      return e.data.correlativo ?? 'sin número';
    case 'stock.changed':
      // @ts-expect-error a stock change has no correlativo
      void e.data.correlativo;
      return e.data.motivo;
    default:
      return e.type;
  }
}
export async function firstProduct(): Promise<number | undefined> {
  const { body } = await api.get('/events', { query: { types: 'stock.changed' } });
  const first = body.data[0];
  return first?.type === 'stock.changed' ? first.data.id_producto : undefined;
}
`;

describe('the client package, packed and installed by a partner', () => {
  let stack: Stack;
  let a: SalesRefs;
  let receiver: TestReceiver;
  let folder: string;

  beforeAll(async () => {
    [stack, receiver, folder] = await Promise.all([
      Stack.start({ services: ['gateway', 'inventory', 'sales', 'subscriptions'], subscriptions: { EVENTS_POLL_MS: '100' } }),
      TestReceiver.start(),
      mkdtemp(path.join(os.tmpdir(), 'erp-client-package-')),
    ]);
    a = refsOf(await stack.seed(salesFixture()), 'a');
  });
  afterAll(async () => {
    await stack.stop();
    await receiver.stop();
    await rm(folder, { recursive: true, force: true });
  });

  it('installs from its tarball without the network, reads a sale and verifies a signed delivery with it', async () => {
    const env = { ...process.env, PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}` };
    // `npm pack` builds the package first (prepack): what a partner gets is the compiled ESM and its declarations.
    await run(NPM, ['pack', '--pack-destination', folder, '--silent'], { cwd: path.join(ROOT, 'libs/client'), env });
    const tarball = (await readdir(folder)).find((f) => f.endsWith('.tgz'))!;
    await writeFile(path.join(folder, 'package.json'), JSON.stringify({ name: 'partner', private: true, type: 'module' }));
    await run(NPM, ['install', '--offline', '--no-audit', '--no-fund', '--silent', `./${tarball}`], { cwd: folder, env });
    const installed = await readdir(path.join(folder, 'node_modules/@erp/client'));
    expect(installed.sort()).toEqual(['README.md', 'dist', 'package.json']);

    const subscription = await stack.api(`${API}/event-subscriptions`, {
      key: SALES_KEY_A,
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, events: ['sale.created'] }),
    });
    const secret = (await json(subscription)).data.secret as string;
    const sale = await stack.api(`${API}/sales`, {
      key: SALES_KEY_A,
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        fecha: '2026-03-10',
        estado: 'Completada',
        id_sucursal: a.sucursales.centro,
        id_bodega: a.bodegas.principal,
        id_documento: a.documentos.factura,
        id_canal: a.canales.tienda,
        detalles: [{ codigo_producto: 'MOU-01', cantidad: 1 }],
      }),
    });
    const venta = (await json(sale)).data as { id: number; correlativo: string };
    for (let waited = 0; receiver.received.length === 0 && waited < 15_000; waited += 100) await new Promise((r) => setTimeout(r, 100));
    const delivery = receiver.received[0]!;
    // Deliveries name the interface version that sent them.
    expect(delivery.headers['user-agent']).toBe('erp-partner-events/1.7');

    await writeFile(path.join(folder, 'partner.mjs'), PARTNER_PROGRAM);
    const partnerEnv = {
      ...env,
      BASE_URL: `${stack.baseUrl}${API}`,
      API_KEY: SALES_KEY_A,
      SECRET: secret,
      SALE_ID: String(venta.id),
      DELIVERY: JSON.stringify(delivery),
    };
    // As run plainly, and as a bundler's development build resolves it (Vite and webpack set the
    // `development` condition): both find the compiled files the tarball ships.
    for (const conditions of [[], ['--conditions=development']]) {
      const { stdout } = await run(process.execPath, [...conditions, 'partner.mjs'], { cwd: folder, env: partnerEnv });
      expect(JSON.parse(stdout)).toEqual({
        status: 200,
        correlativo: venta.correlativo,
        event: { type: 'sale.created', id: venta.id },
        forged: 'DeliveryVerificationError',
      });
    }

    await writeFile(path.join(folder, 'partner.ts'), PARTNER_TYPES);
    const check = ['--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022'];
    const types = ['--typeRoots', path.join(ROOT, 'node_modules/@types'), '--types', 'node', 'partner.ts'];
    await expect(run(process.execPath, [TSC, ...check, ...types], { cwd: folder })).resolves.toBeDefined();
  });
});
