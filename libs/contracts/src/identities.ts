import type { Catalog, EventCatalog } from './catalog';
import { exportsEvents, exportsSubjects, inventoryExportSubjects, returnsExportSubjects, salesExportSubjects } from './exports';
import { gatewayDirectorySubjects, gatewayEvents, gatewaySubjects } from './gateway';
import { inventoryEvents, inventorySubjects } from './inventory';
import { packagesEvents, packagesSubjects } from './packages';
import { returnsAdminSubjects, returnsApiSubjects, returnsEvents, returnsForSalesSubjects, returnsPlatformSubjects } from './returns';
import { salesAdminSubjects, salesApiSubjects, salesEvents, salesForReturnsSubjects, salesPlatformSubjects, salesSubjects } from './sales';
import type { ServiceName } from './subjects';
import { subscriptionsSubjects } from './subscriptions';
import { webhookEvents, webhookGatewaySubjects, webhookSubjects } from './webhooks';

/**
 * What each service may do on the bus, by catalog: the NATS permissions of its identity are
 * generated from this (libs/bus `natsPermissions`), never written by hand. `serves` are the
 * catalogs it answers, `calls` those it requests (without their `<service>.admin.*` subjects:
 * only the admin identity calls those), `publishes` its own events, `consumers` its durable
 * JetStream consumers (durable name → the one event subject it reads), `listens` events it
 * receives as they pass without a durable (cache invalidation: the gateway's API keys,
 * webhook-ingest's integration tokens).
 */
export interface BusIdentity {
  serves: readonly Catalog[];
  calls: readonly Catalog[];
  publishes: readonly EventCatalog[];
  consumers: Readonly<Record<string, string>>;
  listens: readonly string[];
  /**
   * Its use of the export files' object store: `manage` creates it and removes files, `write`
   * writes files (the owners of exported data), `read` streams them (the gateway's downloads).
   */
  exportFiles?: 'manage' | 'write' | 'read';
}

export const BUS_IDENTITIES = {
  gateway: {
    serves: [gatewaySubjects, gatewayDirectorySubjects, webhookGatewaySubjects],
    calls: [
      exportsSubjects,
      inventorySubjects,
      packagesSubjects,
      returnsApiSubjects,
      salesApiSubjects,
      subscriptionsSubjects,
      webhookSubjects,
    ],
    publishes: [gatewayEvents],
    consumers: {},
    listens: ['events.gateway.credentials.changed'],
    exportFiles: 'read',
  },
  inventory: {
    serves: [inventorySubjects, inventoryExportSubjects],
    calls: [salesSubjects],
    publishes: [inventoryEvents],
    consumers: { 'inventory-sale-created': 'events.sales.sale.created' },
    listens: [],
    exportFiles: 'write',
  },
  sales: {
    serves: [salesSubjects, salesForReturnsSubjects, salesApiSubjects, salesAdminSubjects, salesPlatformSubjects, salesExportSubjects],
    calls: [inventorySubjects, returnsForSalesSubjects],
    publishes: [salesEvents],
    consumers: { 'sales-return-created': 'events.returns.return.created', 'sales-return-annulled': 'events.returns.return.annulled' },
    listens: [],
    exportFiles: 'write',
  },
  returns: {
    serves: [returnsApiSubjects, returnsAdminSubjects, returnsPlatformSubjects, returnsForSalesSubjects, returnsExportSubjects],
    calls: [inventorySubjects, salesForReturnsSubjects],
    publishes: [returnsEvents],
    consumers: { 'returns-stock-created': 'events.returns.return.created', 'returns-stock-annulled': 'events.returns.return.annulled' },
    listens: [],
    exportFiles: 'write',
  },
  packages: {
    serves: [packagesSubjects],
    calls: [gatewayDirectorySubjects, inventorySubjects],
    publishes: [packagesEvents],
    consumers: {},
    listens: [],
  },
  'webhook-ingest': {
    serves: [webhookSubjects],
    calls: [inventorySubjects, returnsPlatformSubjects, salesApiSubjects, salesPlatformSubjects, webhookGatewaySubjects],
    publishes: [webhookEvents],
    consumers: { 'webhook-ingest-deliveries': 'events.webhooks.delivery.received' },
    listens: ['events.webhooks.integration.changed'],
  },
  subscriptions: {
    serves: [subscriptionsSubjects],
    calls: [],
    publishes: [],
    // The event log reads every event of the stream, in stream order.
    consumers: { 'subscriptions-event-log': 'events.>' },
    listens: [],
  },
  exports: {
    serves: [exportsSubjects],
    calls: [inventoryExportSubjects, returnsExportSubjects, salesExportSubjects],
    publishes: [exportsEvents],
    consumers: {},
    listens: [],
    exportFiles: 'manage',
  },
} as const satisfies Record<ServiceName, BusIdentity>;

/** The identity of the back-office CLI: the only one that may call `<service>.admin.*`. */
export const ADMIN_IDENTITY = 'admin';

/** A durable consumer name the service's identity allows (a name not declared above does not compile). */
export type ConsumerName<S extends ServiceName> = keyof (typeof BUS_IDENTITIES)[S]['consumers'] & string;
