import type { Bus } from '@erp/bus';
import type { TenantContext } from '@erp/contracts';
import type { ExportJob } from '../db/exportacion.repository';
import { busInventory } from '../ports/inventory.port';
import { busReturns } from '../ports/returns.port';
import { busSales } from '../ports/sales.port';

export interface WrittenFile {
  objetos: number;
  bytes: number;
  cursor: string;
}

/** Asks the service that owns the resource to write the attempt's file: the only service that reads the data. */
export async function writeExportFile(bus: Bus, job: ExportJob, objeto: string, timeoutMs: number): Promise<WrittenFile> {
  const ctx: TenantContext = { ...job.contexto, requestId: `exportacion-${job.id}-${job.intento}` };
  const request = { exportacion_id: job.id, objeto };
  const options = { timeoutMs };
  switch (job.recurso) {
    case 'sales':
      return busSales(bus).writeExport(ctx, { ...request, filtros: job.filtros }, options);
    case 'returns':
      return busReturns(bus).writeExport(ctx, { ...request, filtros: job.filtros }, options);
    case 'inventory':
      return busInventory(bus).writeExport(ctx, { ...request, filtros: job.filtros }, options);
  }
}
