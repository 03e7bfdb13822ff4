import type { AnyRoute } from '../route';
import { eventsRoutes } from './events.routes';
import { exportsRoutes } from './exports.routes';
import { inventoryRoutes } from './inventory.routes';
import { lookupsRoutes } from './lookups.routes';
import { packagesRoutes } from './packages.routes';
import { returnsRoutes } from './returns.routes';
import { salesRoutes } from './sales.routes';
import { systemRoutes } from './system.routes';

/** The partner API's route table: the app registers it and the OpenAPI document is generated from it. */
export function apiRoutes(limits: { standard: number; withDateFilters: number }): AnyRoute[] {
  return [
    ...inventoryRoutes,
    ...salesRoutes,
    ...returnsRoutes,
    ...packagesRoutes,
    ...systemRoutes(limits),
    ...eventsRoutes,
    ...lookupsRoutes,
    ...exportsRoutes,
  ];
}
