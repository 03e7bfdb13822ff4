import { deleteObject, exportWriterOf, type Bus } from '@erp/bus';
import { AppError, type ParsedRequestOf, type returnsExportSubjects } from '@erp/contracts';

/** `returns.export.remove`: removes a file of this service's export store (the exports service decides when a file goes). */
export function removeExportHandler(bus: Bus) {
  return async ({ objeto }: ParsedRequestOf<typeof returnsExportSubjects, 'returns.export.remove'>) => {
    if (exportWriterOf(objeto) !== 'returns')
      throw AppError.validation(`${objeto} no es un archivo del almacén de exportaciones de returns`);
    return { removed: await deleteObject(bus, objeto) };
  };
}
