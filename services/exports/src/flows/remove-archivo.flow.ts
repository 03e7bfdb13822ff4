import type { Bus } from '@erp/bus';
import type { RecursoExportacion } from '@erp/contracts';
import { busInventory } from '../ports/inventory.port';
import { busReturns } from '../ports/returns.port';
import { busSales } from '../ports/sales.port';

/**
 * Asks the service that wrote a file (the owner of the resource) to remove it from its store: only
 * a writer may touch its store's files. False when the store had no such file.
 */
export async function removeArchivo(bus: Bus, recurso: RecursoExportacion, objeto: string, requestId: string): Promise<boolean> {
  const ctx = { requestId };
  const request = { objeto };
  switch (recurso) {
    case 'sales':
      return (await busSales(bus).removeExport(ctx, request)).removed;
    case 'returns':
      return (await busReturns(bus).removeExport(ctx, request)).removed;
    case 'inventory':
      return (await busInventory(bus).removeExport(ctx, request)).removed;
  }
}
