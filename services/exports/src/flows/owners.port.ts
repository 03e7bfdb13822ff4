import type { Bus } from '@erp/bus';
import { inventoryExportSubjects, returnsExportSubjects, salesExportSubjects, type TenantContext } from '@erp/contracts';
import type { ExportJob } from '../db/exportacion.repository';

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
      return bus.request(salesExportSubjects, 'sales.export.write', { ...request, filtros: job.filtros }, ctx, options);
    case 'returns':
      return bus.request(returnsExportSubjects, 'returns.export.write', { ...request, filtros: job.filtros }, ctx, options);
    case 'inventory':
      return bus.request(inventoryExportSubjects, 'inventory.export.write', { ...request, filtros: job.filtros }, ctx, options);
  }
}
