import { readFileSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { API_BASE, API_VERSION, EVENT_TYPES } from '@erp/contracts';
import { apiRoutes } from '../../services/gateway/src/http/routes';
import { WEBHOOK_ROUTES } from '../../services/gateway/src/http/webhooks';
import { openApiPath } from '../../services/gateway/src/openapi/openapi';
import { Stack } from '../support/stack';

const CHROMIUM = '/usr/bin/chromium';
const COMMITTED = path.resolve(__dirname, '../../libs/contracts/openapi.json');
const COMMITTED_WEBHOOKS = path.resolve(__dirname, '../../libs/contracts/openapi-webhooks.json');

/** Every endpoint the reference must show: the route table, the inbound webhooks, the partner events we send and the reference itself. */
function expectedEndpoints(): string[] {
  return [
    ...apiRoutes({ standard: 1000, withDateFilters: 2000 }).map((route) => `${route.method.toUpperCase()} ${openApiPath(route.path)}`),
    ...WEBHOOK_ROUTES.map((route) => `POST ${openApiPath(route.path)}`),
    // Each event type, the `ping` of a subscription's test, and `evento`: the union one receiver handles.
    ...[...EVENT_TYPES, 'ping', 'evento'].map((type) => `POST ${type}`),
    'GET /openapi.json',
    'GET /openapi-webhooks.json',
    'GET /docs',
  ].sort();
}

describe('the API reference served by the gateway', () => {
  let stack: Stack;
  let browser: Browser;

  beforeAll(async () => {
    stack = await Stack.start({ services: ['gateway'] });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it('serves the OpenAPI document without a key or quota, equal to the committed file', async () => {
    const res = await stack.api(`${API_BASE}/openapi.json`);

    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('x-ratelimit-limit')).toBeNull();
    expect(await res.text()).toBe(readFileSync(COMMITTED, 'utf8'));
  });

  it('serves the webhooks their own document, with their base as its server, equal to the committed file', async () => {
    const res = await stack.api(`${API_BASE}/openapi-webhooks.json`);

    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toBe(readFileSync(COMMITTED_WEBHOOKS, 'utf8'));
    expect(JSON.parse(text).servers).toEqual([expect.objectContaining({ url: '/api/webhook' })]);
  });

  it('answers 405 to other methods on the reference paths', async () => {
    const res = await stack.api(`${API_BASE}/openapi.json`, { method: 'POST' });

    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
  });

  it('serves only the viewer files it names', async () => {
    expect((await stack.api(`${API_BASE}/docs/assets/swagger-ui-bundle.js`)).status).toBe(200);
    expect((await stack.api(`${API_BASE}/docs/assets/package.json`)).status).toBe(404);
    expect((await stack.api(`${API_BASE}/docs/assets/..%2F..%2Fpackage.json`)).status).toBe(404);
  });

  it('renders every endpoint in a browser, from the gateway alone (no request leaves it)', async () => {
    const page = await browser.newPage();
    const elsewhere: string[] = [];
    const problems: string[] = [];
    await page.route('**/*', (route) => {
      if (route.request().url().startsWith(stack.baseUrl)) return route.continue();
      elsewhere.push(route.request().url());
      return route.abort();
    });
    page.on('pageerror', (err) => problems.push(err.message));
    page.on('console', (msg) => {
      if (msg.type() === 'error') problems.push(msg.text());
    });

    const res = await page.goto(`${stack.baseUrl}${API_BASE}/docs`);
    expect(res?.status()).toBe(200);
    await page.locator('#reference .opblock').first().waitFor({ timeout: 15_000 });
    await page.locator('#webhooks .opblock').first().waitFor({ timeout: 15_000 });
    const shown = await page.$$eval('.opblock', (blocks) =>
      blocks.map((block) => {
        const method = block.querySelector('.opblock-summary-method')?.textContent?.trim() ?? '?';
        const where = block.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? '?';
        return `${method} ${where}`;
      }),
    );

    expect(shown.sort()).toEqual(expectedEndpoints());
    expect(await page.locator('#reference .info .title').textContent()).toContain(API_VERSION);
    expect(await page.locator('#webhooks .info .title').textContent()).toContain('Webhooks');
    expect(elsewhere).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  });
});
