import type pg from 'pg';
import type { CompanyPlan } from './plan';
import type { Progress } from './progress';
import type { Random } from '@erp/testing';

/** What the gateway loader wrote for a company, read by the loaders of the other schemas. */
export interface LoadedUser {
  id: number;
  nombre: string;
  rol: 'Administrador' | 'Supervisor' | 'Vendedor';
  /** Advisor code of sellers (packages link `codigo_asesor` to it). */
  codigo: string | null;
}

export interface LoadedBodega {
  id: number;
  nombre: string;
  sucursalId: number;
}

/** A company's products by position: ids are contiguous, so arrays indexed from `firstId` describe them. */
export interface LoadedProducts {
  firstId: number;
  count: number;
  codigo: string[];
  nombre: string[];
  /** Unit price including tax, in cents. */
  precioCents: Int32Array;
  /** Unit cost, in cents. */
  costoCents: Int32Array;
  /** Tax rate of the product in percent, or -1 for the company's rate. */
  impuesto: Int8Array;
  /** 1 for services (they never move stock). */
  servicio: Uint8Array;
}

export interface LoadedCompany {
  plan: CompanyPlan;
  empresaId: number;
  /** Company tax rate, percent. */
  iva: number;
  usuarios: LoadedUser[];
  sucursales: Array<{ id: number; nombre: string }>;
  bodegas: LoadedBodega[];
  productos?: LoadedProducts;
  /** Written by the sales loader: the document types and channels sales are issued with. */
  ventas?: {
    documentos: Array<{ id: number; sucursalId: number; nombre: string; cotizacion: boolean }>;
    canales: Array<{ id: number; nombre: string }>;
    /** Completed sales picked to be returned (about `plan.returns`), each with its first line. */
    devolvibles: ReturnableSale[];
  };
}

export interface ReturnableSale {
  ventaId: number;
  /** Day of the two-year history the sale is on. */
  day: number;
  bodegaId: number;
  nombreCliente: string;
  line: { detalleId: number; productIndex: number; cantidad: number; precioCents: number; rate: number; servicio: boolean };
}

export interface LoadContext {
  /** A connection to the database of the loader's schema. */
  client: pg.ClientBase;
  /** Another connection to that database with the same session settings, for a loader that fills two tables at once; the loader ends it. */
  connect(): Promise<pg.Client>;
  /**
   * The connection to the database another schema lives in (the same as `client` while they share
   * one): a loader that writes what another schema derives from its rows reads its own database and
   * writes through this one, never one statement naming both schemas.
   */
  clientOf(schema: string): Promise<pg.ClientBase>;
  companies: LoadedCompany[];
  random: Random;
  progress: Progress;
  /** Last day of the two years of history, `YYYY-MM-DD`. */
  today: string;
}

/** One schema's bulk loader. The loaders run in order; each reads what the earlier ones recorded. */
export interface Loader {
  schema: string;
  /** Why this schema cannot be loaded yet (its tables have not landed), or undefined. */
  missing(client: pg.ClientBase): Promise<string | undefined>;
  /** Loads every company; returns rows written per table. */
  load(ctx: LoadContext): Promise<Record<string, number>>;
}

/** The tables among `tables` that do not exist in `schema`. */
export async function missingTables(client: pg.ClientBase, schema: string, tables: readonly string[]): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    `select t as name from unnest($2::text[]) t where to_regclass(format('%I.%I', $1::text, t)) is null`,
    [schema, tables],
  );
  return rows.map((r) => r.name);
}
