import { exportFileName } from '@erp/bus';
import type { ExportacionInput, RecursoExportacion } from '@erp/contracts';
import type { ExportacionesTable } from '../db/tables';

export type ExportacionRow = Omit<
  ExportacionesTable,
  'id' | 'estado' | 'intento' | 'created_at' | 'filtros' | 'contexto' | 'bytes' | 'reintentar_at'
> & {
  id: number;
  estado: ExportacionInput['estado'];
  intento: number;
  created_at: Date;
  filtros: Record<string, unknown>;
  bytes: string | null;
};

/**
 * The object an attempt writes: one name per attempt, so an attempt left behind by a worker that
 * died can never overwrite, or be taken for, the file of the attempt that finished; in the store
 * of the service that owns the resource (its name starts with it).
 */
export function objetoOf(exportacion: { recurso: RecursoExportacion; empresa_id: number; id: number; intento: number }): string {
  return exportFileName(
    exportacion.recurso,
    `empresa-${exportacion.empresa_id}.exportacion-${exportacion.id}.intento-${exportacion.intento}.ndjson.gz`,
  );
}

/** The export as the API answers it. */
export function toExportacion(row: ExportacionRow): ExportacionInput {
  return {
    id: row.id,
    recurso: row.recurso,
    filtros: row.filtros,
    estado: row.estado,
    objetos: row.objetos,
    bytes: row.bytes === null ? null : Number(row.bytes),
    created_at: row.created_at,
    iniciada: row.iniciada,
    completada: row.completada,
    expira: row.expira,
    error: row.error,
    descarga: row.estado === 'completada' && row.objeto !== null ? `/exports/${row.id}/download` : null,
    cursor: row.cursor,
  };
}
