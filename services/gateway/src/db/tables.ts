import type { Generated } from 'kysely';
import type { OutboxTables } from '@erp/bus';
import type { Scope } from '@erp/contracts';

/** The Postgres schema this service owns. */
export const GATEWAY_SCHEMA = 'gateway';

export interface EmpresasTable {
  id: Generated<number>;
  clave: string | null;
  nombre: string;
  activo: boolean;
  vender_sin_stock: boolean;
  /** Default tax rate, percent, exact decimal string. */
  iva: string;
  /** ref → id maps recorded by the fixture loader, so re-seeding reports the same ids. */
  seed_refs: Generated<unknown>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface UsuariosTable {
  id: Generated<number>;
  empresa_id: number;
  nombre: string;
  rol: 'Administrador' | 'Supervisor' | 'Vendedor';
  codigo: string | null;
  activo: boolean;
  created_at: Generated<Date>;
}

export interface ApiKeysTable {
  id: Generated<number>;
  empresa_id: number;
  usuario_id: number | null;
  /** SHA-256 of the key; the key itself is shown once and never stored. */
  key_hash: Buffer;
  /** First characters of the key, to recognise it in listings. */
  prefix: string;
  activo: boolean;
  created_at: Generated<Date>;
  revoked_at: Date | null;
  /** Given by the company (null on keys made before 1.7.0). */
  nombre: string | null;
  /** `recurso:nivel` scopes (every resource at write on keys made before 1.7.0). */
  alcances: Generated<Scope[]>;
  /** When it stops working; a rotated key's is the end of its grace. */
  expira_el: Date | null;
  /** The hour of the last use and its client address, written in batches. */
  ultimo_uso: Date | null;
  ultima_direccion: string | null;
  /** The key that replaced this one by rotation. */
  rotada_a: number | null;
  /** When `api_key.expiring` was announced for it. */
  aviso_vencimiento: Date | null;
}

/** The answer of a request sent with an `Idempotency-Key` (see migration 0002). */
export interface IdempotenciaTable {
  empresa_id: number;
  clave: string;
  /** SHA-256 of the request's canonical form: method, path, query and body. */
  huella: string;
  /** Null while the first request runs. */
  status: number | null;
  cuerpo: Buffer | null;
  /** The headers a replay repeats (`Content-Type`, `Location`). */
  cabeceras: Record<string, string> | null;
  created_at: Generated<Date>;
}

export interface GatewayDb extends OutboxTables {
  empresas: EmpresasTable;
  usuarios: UsuariosTable;
  api_keys: ApiKeysTable;
  idempotencia: IdempotenciaTable;
}
