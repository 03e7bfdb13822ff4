import { scoped, type AnyRoute } from '../route';
import { apiKeysRoutes } from './api-keys.routes';
import { eventsRoutes } from './events.routes';
import { exportsRoutes } from './exports.routes';
import { integrationsRoutes } from './integrations.routes';
import { inventoryRoutes } from './inventory.routes';
import { lookupsRoutes } from './lookups.routes';
import { packagesRoutes } from './packages.routes';
import { returnsRoutes } from './returns.routes';
import { salesRoutes } from './sales.routes';
import { systemRoutes } from './system.routes';

/**
 * The partner API's route table: the app registers it and the OpenAPI document is generated from
 * it. Each resource's scope is declared here, once: its GETs need `read`, the rest `write`. The
 * lookups serve the making of sales; the quota's status is any key's.
 */
export function apiRoutes(limits: { standard: number; withDateFilters: number }): AnyRoute[] {
  return [
    ...scoped('inventory', inventoryRoutes),
    ...scoped('sales', salesRoutes),
    ...scoped('returns', returnsRoutes),
    ...scoped('packages', packagesRoutes),
    ...systemRoutes(limits),
    ...scoped('events', eventsRoutes),
    ...scoped('sales', lookupsRoutes),
    ...scoped('exports', exportsRoutes),
    ...scoped('keys', apiKeysRoutes),
    // The shops' orders become sales: who may read sales may read how they arrive.
    ...scoped('sales', integrationsRoutes),
  ];
}
