import { apiKeySubjects } from './api-keys';
import type { Catalog, EventCatalog } from './catalog';
import {
  RECURSOS_EXPORTACION,
  exportsEvents,
  exportsSubjects,
  inventoryExportSubjects,
  returnsExportSubjects,
  salesExportSubjects,
  type RecursoExportacion,
} from './exports';
import { gatewayDirectorySubjects, gatewayEvents, gatewaySubjects } from './gateway';
import { inventoryEvents, inventorySubjects } from './inventory';
import { packagesEvents, packagesSubjects } from './packages';
import { returnsAdminSubjects, returnsApiSubjects, returnsEvents, returnsForSalesSubjects, returnsPlatformSubjects } from './returns';
import { salesAdminSubjects, salesApiSubjects, salesEvents, salesForReturnsSubjects, salesPlatformSubjects, salesSubjects } from './sales';
import { STREAM_FAMILIES, streamFamilyOf, type ServiceName, type StreamFamily } from './subjects';
import { subscriptionsSubjects } from './subscriptions';
import { webhookApiSubjects, webhookEvents, webhookGatewaySubjects, webhookIntakeEvents, webhookSubjects } from './webhooks';

/**
 * What each service may do on the bus: the NATS permissions of its identity are generated from
 * this (libs/bus `natsPermissions`), never written by hand. `serves` are the catalogs it answers,
 * `calls` the subjects it requests, one by one (a unit test reads every `bus.request` of the
 * service's code and fails when this list and the code differ; never a `<service>.admin.*`
 * subject: only the admin identity calls those), `publishes` its own events, `consumers` its
 * durable JetStream consumers (durable name → the one event subject it reads, on the stream that
 * carries it: `streamFamilyOf`; the operator identity creates them), `listens` events it receives
 * as they pass without a durable (cache invalidation: the gateway's API keys, webhook-ingest's
 * integration tokens).
 */
export interface BusIdentity {
  serves: readonly Catalog[];
  calls: readonly string[];
  publishes: readonly EventCatalog[];
  consumers: Readonly<Record<string, string>>;
  listens: readonly string[];
  /**
   * Its use of the export files' object stores, one per writer (which only the operator creates):
   * `write` names the store it writes and removes files in (the owner of the exported data),
   * `read` the stores whose files it streams (the gateway's downloads), `info` those whose limits
   * it reads, and nothing else of them (the exports service, which asks the writers to remove files).
   */
  exportFiles?: { write?: RecursoExportacion; read?: readonly RecursoExportacion[]; info?: readonly RecursoExportacion[] };
}

/** Subjects of `catalog` a service calls: a name the catalog does not have does not compile. */
const callsOf = <C extends Catalog>(_catalog: C, ...subjects: Array<keyof C & string>): readonly string[] => subjects;

export const BUS_IDENTITIES = {
  gateway: {
    serves: [gatewaySubjects, gatewayDirectorySubjects, webhookGatewaySubjects, apiKeySubjects],
    calls: [
      // Its /api-keys routes ask the gateway service (any replica) to change the company's keys.
      ...callsOf(apiKeySubjects, 'gateway.apikeys.list', 'gateway.apikeys.create', 'gateway.apikeys.rotate', 'gateway.apikeys.revoke'),
      ...callsOf(exportsSubjects, 'exports.create', 'exports.list', 'exports.get', 'exports.cancel', 'exports.download'),
      ...callsOf(inventorySubjects, 'inventory.product.list', 'inventory.product.get', 'inventory.summary', 'inventory.sucursal.list'),
      ...callsOf(packagesSubjects, 'packages.import'),
      ...callsOf(returnsApiSubjects, 'returns.return.list', 'returns.return.get', 'returns.summary'),
      ...callsOf(
        salesApiSubjects,
        'sales.sale.list',
        'sales.sale.version',
        'sales.sale.get',
        'sales.summary',
        'sales.create',
        'sales.update',
        'sales.batch.create',
        'sales.canal.list',
        'sales.cliente.list',
        'sales.documento.list',
      ),
      ...callsOf(
        subscriptionsSubjects,
        'subscriptions.subscription.create',
        'subscriptions.subscription.list',
        'subscriptions.subscription.get',
        'subscriptions.subscription.delete',
        'subscriptions.subscription.replay',
        'subscriptions.subscription.update',
        'subscriptions.subscription.rotate',
        'subscriptions.subscription.ping',
        'subscriptions.delivery.list',
        'subscriptions.event.list',
      ),
      ...callsOf(webhookSubjects, 'webhooks.receive'),
      ...callsOf(webhookApiSubjects, 'webhooks.integration.list'),
    ],
    publishes: [gatewayEvents],
    consumers: {},
    listens: ['events.gateway.credentials.changed'],
    exportFiles: { read: RECURSOS_EXPORTACION },
  },
  inventory: {
    serves: [inventorySubjects, inventoryExportSubjects],
    calls: callsOf(salesSubjects, 'sales.sale.exists'),
    publishes: [inventoryEvents],
    consumers: { 'inventory-sale-created': 'events.sales.sale.created' },
    listens: [],
    exportFiles: { write: 'inventory' },
  },
  sales: {
    serves: [salesSubjects, salesForReturnsSubjects, salesApiSubjects, salesAdminSubjects, salesPlatformSubjects, salesExportSubjects],
    calls: [
      ...callsOf(
        inventorySubjects,
        'inventory.product.resolve',
        'inventory.sucursal.resolve',
        'inventory.stock.reserve',
        'inventory.stock.reserve-many',
        'inventory.stock.release',
        'inventory.stock.adjust',
        'inventory.stock.revert',
      ),
      ...callsOf(returnsForSalesSubjects, 'returns.sale.registrations'),
    ],
    publishes: [salesEvents],
    consumers: { 'sales-return-created': 'events.returns.return.created', 'sales-return-annulled': 'events.returns.return.annulled' },
    listens: [],
    exportFiles: { write: 'sales' },
  },
  returns: {
    serves: [returnsApiSubjects, returnsAdminSubjects, returnsPlatformSubjects, returnsForSalesSubjects, returnsExportSubjects],
    calls: [
      ...callsOf(inventorySubjects, 'inventory.product.resolve', 'inventory.stock.adjust'),
      ...callsOf(salesForReturnsSubjects, 'sales.sale.returnable', 'sales.sale.return.register', 'sales.sale.return.square'),
    ],
    publishes: [returnsEvents],
    consumers: { 'returns-stock-created': 'events.returns.return.created', 'returns-stock-annulled': 'events.returns.return.annulled' },
    listens: [],
    exportFiles: { write: 'returns' },
  },
  packages: {
    serves: [packagesSubjects],
    calls: [...callsOf(gatewayDirectorySubjects, 'gateway.usuario.by-codigo'), ...callsOf(inventorySubjects, 'inventory.sucursal.resolve')],
    publishes: [packagesEvents],
    consumers: {},
    listens: [],
  },
  'webhook-ingest': {
    serves: [webhookSubjects, webhookApiSubjects],
    calls: [
      ...callsOf(
        inventorySubjects,
        'inventory.product.resolve',
        'inventory.product.create',
        'inventory.product.update',
        'inventory.stock.adjust',
      ),
      ...callsOf(returnsPlatformSubjects, 'returns.platform.create'),
      ...callsOf(salesApiSubjects, 'sales.create', 'sales.batch.create', 'sales.sale.get', 'sales.update'),
      ...callsOf(salesPlatformSubjects, 'sales.customer.find-or-create', 'sales.sale.annul', 'sales.sale.by-reference'),
      ...callsOf(webhookGatewaySubjects, 'gateway.webhook.context'),
    ],
    publishes: [webhookEvents, webhookIntakeEvents],
    consumers: {
      'webhook-ingest-deliveries': 'intake.webhooks.delivery.received',
      'webhook-ingest-stock': 'events.inventory.stock.changed',
    },
    listens: ['events.webhooks.integration.changed'],
  },
  subscriptions: {
    serves: [subscriptionsSubjects],
    calls: [],
    publishes: [],
    // The event log reads every event of the events stream, in stream order.
    consumers: { 'subscriptions-event-log': 'events.>' },
    listens: [],
  },
  exports: {
    serves: [exportsSubjects],
    calls: [
      ...callsOf(inventoryExportSubjects, 'inventory.export.write', 'inventory.export.remove'),
      ...callsOf(returnsExportSubjects, 'returns.export.write', 'returns.export.remove'),
      ...callsOf(salesExportSubjects, 'sales.export.write', 'sales.export.remove'),
    ],
    publishes: [exportsEvents],
    consumers: {},
    listens: [],
    exportFiles: { info: RECURSOS_EXPORTACION },
  },
} as const satisfies Record<ServiceName, BusIdentity>;

/** The identity of the back-office CLI: the only one that may call `<service>.admin.*`. */
export const ADMIN_IDENTITY = 'admin';

/**
 * The identity of the migration step: the only one that may create the events stream, the export
 * stores and the declared durable consumers. It serves and calls nothing, and changes or deletes
 * no stream.
 */
export const OPERATOR_IDENTITY = 'operator';

/**
 * The streams an identity uses, by family: those that carry the events it publishes and those its
 * durables read. A service checks only these at start, and may read the info of only these.
 */
export function streamFamiliesOf(identity: BusIdentity): StreamFamily[] {
  const subjects = [...identity.publishes.flatMap((events) => Object.keys(events)), ...Object.values(identity.consumers)];
  const used = new Set(subjects.map(streamFamilyOf));
  return STREAM_FAMILIES.filter((family) => used.has(family));
}

/** A durable consumer name the service's identity allows (a name not declared above does not compile). */
export type ConsumerName<S extends ServiceName> = keyof (typeof BUS_IDENTITIES)[S]['consumers'] & string;
