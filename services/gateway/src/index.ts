export { gatewayService, GATEWAY_SCHEMA, type GatewayOptions } from './service';
export { GatewayConfig } from './config';
export { migrations as gatewayMigrations } from './db/migrations';
export { apiRoutes } from './http/routes';
