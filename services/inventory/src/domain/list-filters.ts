import type { InventoryFilters, InventoryListRequest } from '@erp/contracts';

const FILTER_KEYS = [
  'codigo',
  'nombre',
  'categoria',
  'marca',
  'tipo',
  'enable',
  'con_stock',
  'stock_minimo',
] as const satisfies ReadonlyArray<keyof InventoryFilters>;

/** The filters a list request carries, normalised, without paging or ordering: `meta.filters_applied`. */
export function filtersApplied(request: InventoryListRequest): InventoryFilters {
  const applied: Record<string, unknown> = {};
  for (const key of FILTER_KEYS) {
    if (request[key] !== undefined) applied[key] = request[key];
  }
  return applied as InventoryFilters;
}
