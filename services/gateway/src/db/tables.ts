import type { Generated } from 'kysely';
import type { OutboxTables } from '@erp/bus';

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
}

export interface GatewayDb extends OutboxTables {
  empresas: EmpresasTable;
  usuarios: UsuariosTable;
  api_keys: ApiKeysTable;
}
