import type { ColumnType, Generated } from 'kysely';
import type { OutboxTables } from '@erp/bus';
import type { EstadoExportacion, RecursoExportacion, TenantContext } from '@erp/contracts';

export const EXPORTS_SCHEMA = 'exports';

export interface ExportacionesTable {
  id: Generated<number>;
  empresa_id: number;
  recurso: RecursoExportacion;
  filtros: ColumnType<Record<string, unknown>, string, string>;
  estado: Generated<EstadoExportacion>;
  contexto: ColumnType<TenantContext, string, string>;
  /** Attempts started; the object of attempt n is named after it. */
  intento: Generated<number>;
  /** Until when the worker of the current attempt holds the job (it renews it while writing). */
  lease_hasta: Date | null;
  /** Not before when a queued job's next attempt may start (after a failed one); null: at once. */
  reintentar_at: Date | null;
  /** The finished file, set only in the transaction that makes the export `completada`. */
  objeto: string | null;
  objetos: number | null;
  /** bigint: read as a string by pg. */
  bytes: ColumnType<string | null, number | null, number | null>;
  cursor: string | null;
  error: string | null;
  created_at: Generated<Date>;
  iniciada: Date | null;
  completada: Date | null;
  expira: Date | null;
}

/**
 * The file each attempt was asked to write, recorded before its owner is asked: what the sweep
 * looks through for files no job points to. A row goes once its file is removed.
 */
export interface ArchivosTable {
  objeto: string;
  exportacion_id: number;
  intento: number;
  created_at: Generated<Date>;
}

export interface ExportsDb extends OutboxTables {
  exportaciones: ExportacionesTable;
  archivos: ArchivosTable;
}
