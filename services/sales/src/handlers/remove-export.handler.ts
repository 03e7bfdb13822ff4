import { deleteObject, exportWriterOf, type Bus } from '@erp/bus';
import { AppError, type ParsedRequestOf, type salesExportSubjects } from '@erp/contracts';

/** `sales.export.remove`: removes a file of this service's export store (the exports service decides when a file goes). */
export function removeExportHandler(bus: Bus) {
  return async ({ objeto }: ParsedRequestOf<typeof salesExportSubjects, 'sales.export.remove'>) => {
    if (exportWriterOf(objeto) !== 'sales') throw AppError.validation(`${objeto} no es un archivo del almacén de exportaciones de sales`);
    return { removed: await deleteObject(bus, objeto) };
  };
}
