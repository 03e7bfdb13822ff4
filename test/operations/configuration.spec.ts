import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { z } from 'zod';
import type { ServiceName } from '@erp/contracts';
import { ExportsConfig } from '@erp/exports';
import { GatewayConfig } from '@erp/gateway';
import { InventoryConfig } from '@erp/inventory';
import { PackagesConfig } from '@erp/packages';
import { ReturnsConfig } from '@erp/returns';
import { BaseConfig, MigrateConfig } from '@erp/runtime';
import { SalesConfig } from '@erp/sales';
import { SubscriptionsConfig } from '@erp/subscriptions';
import { WebhookIngestConfig } from '@erp/webhook-ingest';

const root = resolve(__dirname, '../..');

/** Every service's schema over the environment: a new service does not compile until it is here. */
const configs: Record<ServiceName, z.ZodType> = {
  gateway: GatewayConfig,
  sales: SalesConfig,
  inventory: InventoryConfig,
  returns: ReturnsConfig,
  packages: PackagesConfig,
  'webhook-ingest': WebhookIngestConfig,
  subscriptions: SubscriptionsConfig,
  exports: ExportsConfig,
};

/** The environment keys a config schema reads: its object's shape, through a transform (webhook-ingest's) to its input. */
function keysOf(schema: z.ZodType): string[] {
  const def = schema.def as { type: string; shape?: Record<string, unknown>; in?: z.ZodType };
  if (def.type === 'object') return Object.keys(def.shape!);
  if (def.type === 'pipe') return keysOf(def.in!);
  throw new Error(`a config schema of type ${def.type}: teach keysOf to read its keys`);
}

/** The keys named in the first column of docs/configuration.md's table (`DATABASE_URL_<SCHEMA>` included as written). */
function documentedKeys(): Set<string> {
  const rows = readFileSync(join(root, 'docs/configuration.md'), 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('| `'));
  return new Set(rows.flatMap((row) => [...row.split('|')[1]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!)));
}

describe('docs/configuration.md', () => {
  const documented = documentedKeys();
  // Each service's migration entry (the chart's hook Job) reads one more schema.
  const readers: Array<[string, z.ZodType]> = [...Object.entries(configs), ['migrate', MigrateConfig]];
  const read = new Map<string, string[]>();
  for (const [reader, schema] of readers) for (const key of keysOf(schema)) read.set(key, [...(read.get(key) ?? []), reader]);

  it('lists every key the services and their migration step read, with the base config’s among them', () => {
    expect(keysOf(BaseConfig).filter((key) => !read.has(key))).toEqual([]);
    const missing = [...read].filter(([key]) => !documented.has(key)).map(([key, services]) => `${key} (${services.join(', ')})`);
    expect(missing).toEqual([]);
  });

  it('lists no key that nothing reads (beside the patterns and the OpenTelemetry SDK’s own)', () => {
    const stray = [...documented].filter((key) => !read.has(key) && !key.includes('<') && !key.startsWith('OTEL_'));
    expect(stray).toEqual([]);
  });
});
