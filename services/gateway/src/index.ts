export { gatewayService, type GatewayOptions } from './service';
export { GATEWAY_SCHEMA } from './db/tables';
export { GatewayConfig } from './config';
export { migrations as gatewayMigrations } from './db/migrations';
export { apiRoutes } from './http/routes';
