import type { Bus } from '@erp/bus';
import type { TenantContext } from '@erp/contracts';
import type { ClaimedExportacion } from '../db/exportacion.repository';
import { busInventory } from '../ports/inventory.port';
import { busReturns } from '../ports/returns.port';
import { busSales } from '../ports/sales.port';

export interface WrittenArchivo {
  objetos: number;
  bytes: number;
  cursor: string;
}

/** Asks the service that owns the resource to write the attempt's file: the only service that reads the data. */
export async function writeArchivo(bus: Bus, exportacion: ClaimedExportacion, objeto: string, timeoutMs: number): Promise<WrittenArchivo> {
  const ctx: TenantContext = { ...exportacion.contexto, requestId: `exportacion-${exportacion.id}-${exportacion.intento}` };
  const request = { exportacion_id: exportacion.id, objeto };
  const options = { timeoutMs };
  switch (exportacion.recurso) {
    case 'sales':
      return busSales(bus).writeExport(ctx, { ...request, filtros: exportacion.filtros }, options);
    case 'returns':
      return busReturns(bus).writeExport(ctx, { ...request, filtros: exportacion.filtros }, options);
    case 'inventory':
      return busInventory(bus).writeExport(ctx, { ...request, filtros: exportacion.filtros }, options);
  }
}
