import { deleteObject, exportWriterOf, type Bus } from '@erp/bus';
import { AppError, type ParsedRequestOf, type inventoryExportSubjects } from '@erp/contracts';

/** `inventory.export.remove`: removes a file of this service's export store (the exports service decides when a file goes). */
export function removeExportHandler(bus: Bus) {
  return async ({ objeto }: ParsedRequestOf<typeof inventoryExportSubjects, 'inventory.export.remove'>) => {
    if (exportWriterOf(objeto) !== 'inventory')
      throw AppError.validation(`${objeto} no es un archivo del almacén de exportaciones de inventory`);
    return { removed: await deleteObject(bus, objeto) };
  };
}
