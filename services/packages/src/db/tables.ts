import type { Generated } from 'kysely';
import type { OutboxTables } from '@erp/bus';

/** The Postgres schema this service owns. */
export const PACKAGES_SCHEMA = 'packages';

/** Numeric columns are read as exact decimal strings; they are written as strings too. */
type Decimal = string;

export interface PaquetesTable {
  id: Generated<number>;
  empresa_id: number;
  /** Branch of the inventory service, checked through it at import. */
  sucursal_id: number;
  /** The company's user whose code is `codigo_asesor`, when one existed at import. */
  usuario_id: number | null;
  /** As sent, whether or not a user has it. */
  codigo_asesor: string;
  cliente: string;
  wr: string;
  guia: string;
  embalaje: string;
  piezas: number;
  peso: Decimal;
  volumen: Decimal | null;
  precio: Decimal;
  cuenta_a_terceros: Decimal;
  otros: Decimal;
  total: Decimal;
  transportista: string | null;
  consignatario: string | null;
  transportador: string | null;
  seguimiento: string | null;
  nota: string | null;
  estado: Generated<string>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface PackagesDb extends OutboxTables {
  paquetes: PaquetesTable;
}
