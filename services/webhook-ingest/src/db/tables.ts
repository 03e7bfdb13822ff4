import type { ColumnType, Generated } from 'kysely';
import type { OutboxTables } from '@erp/bus';
import type { EstadoEntrega, EstadoSuscripcion, Plataforma, RecursoWebhook } from '@erp/contracts';

/** The path that brought a delivery, or an order first. */
export type OrigenPedido = 'webhook' | 'conciliacion';

/** The schema webhook-ingest owns; statements written as SQL name it (the query builder adds it by itself). */
export const WEBHOOK_INGEST_SCHEMA = 'webhook_ingest';

type Json<T> = ColumnType<T, string, string>;

export interface IntegracionesTable {
  id: Generated<number>;
  empresa_id: number;
  plataforma: Plataforma;
  usuario_id: number;
  sucursal_id: number;
  bodega_id: number;
  documento_id: number | null;
  canal_id: number | null;
  producto_envio_id: number | null;
  token_hash: Buffer;
  token_prefix: string;
  secreto: string | null;
  activo: Generated<boolean>;
  tienda_url: string | null;
  /** The shop's credentials and our webhook path, sealed (`domain/credentials.ts`). */
  tienda_credenciales: Buffer | null;
  tienda_ubicacion: string | null;
  stock_colchon: Generated<number>;
  sincronizar_stock: Generated<boolean>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface EntregasTable {
  id: Generated<number>;
  integracion_id: number;
  empresa_id: number;
  plataforma: Plataforma;
  recurso: RecursoWebhook;
  tema: string | null;
  clave_dedup: string;
  referencia: string | null;
  headers: Json<Record<string, string>>;
  cuerpo: Buffer;
  estado: Generated<EstadoEntrega>;
  origen: Generated<OrigenPedido>;
  motivo: string | null;
  intentos: Generated<number>;
  id_venta: number | null;
  recibida_at: Generated<Date>;
  procesada_at: Date | null;
  /** When its last `delivery.received` event was recorded (stored, replayed or requeued). */
  encolada_at: Generated<Date>;
}

export interface PedidosTable {
  empresa_id: number;
  referencia: string;
  estado_plataforma: string | null;
  version: Date | null;
  id_venta: number | null;
  cancelado: Generated<boolean>;
  lineas: ColumnType<Array<string | null>, string | undefined, string>;
  reembolsos: ColumnType<string[], string[] | undefined, string[]>;
  /** The path that brought the order first; null for orders recorded before paths were. */
  origen: OrigenPedido | null;
  integracion_id: number | null;
  /** A refund's lines are still to come: reconciliation reads the order again. */
  lineas_pendientes: Generated<boolean>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

/** One integration's reconciliation: watermark, lease and the last pass's outcome. */
export interface ConciliacionesTable {
  integracion_id: number;
  empresa_id: number;
  marca: Date | null;
  proxima_at: Generated<Date>;
  dueno: string | null;
  vence_at: Date | null;
  ultima_at: Date | null;
  /** End of the last pass that succeeded. */
  correcta_at: Date | null;
  resultado: 'correcta' | 'fallida' | null;
  error: string | null;
  fallos_seguidos: Generated<number>;
  pedidos_leidos: Generated<number>;
  pedidos_recuperados: Generated<number>;
  suscripcion: Generated<EstadoSuscripcion>;
  restauraciones: Generated<number>;
}

export interface MapeosProductoTable {
  empresa_id: number;
  plataforma: Plataforma;
  id_externo: string;
  producto_id: number;
  version: Date | null;
  updated_at: Generated<Date>;
}

/** A product's stock owed to an integration's shop. */
export interface StockPushTable {
  integracion_id: number;
  producto_id: number;
  empresa_id: number;
  codigo: string;
  pendiente_desde: Date | null;
  cambios: Generated<number>;
  tomado_desde: Date | null;
  dueno: string | null;
  vence_at: Date | null;
  proximo_at: Generated<Date>;
  intentos: Generated<number>;
  error: string | null;
  enviado: number | null;
  enviado_at: Date | null;
}

/** How the shop names one of our products (by SKU). */
export interface TiendaProductosTable {
  integracion_id: number;
  codigo: string;
  id_externo: string | null;
  id_padre: string | null;
  leido: number | null;
  revisado_at: Generated<Date>;
}

export interface StockEnviosTable {
  id: Generated<string>;
  integracion_id: number;
  enviado_at: Generated<Date>;
  lag_ms: number;
  productos: number;
  cambios: number;
}

export interface WebhookDb extends OutboxTables {
  integraciones: IntegracionesTable;
  entregas: EntregasTable;
  pedidos: PedidosTable;
  mapeos_producto: MapeosProductoTable;
  conciliaciones: ConciliacionesTable;
  stock_push: StockPushTable;
  tienda_productos: TiendaProductosTable;
  stock_envios: StockEnviosTable;
}
