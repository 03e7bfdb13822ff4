import { Bus } from '@erp/bus';
import { createLogger } from '@erp/runtime';

/** A bus client for back-office commands, on the prefix the stack uses. */
export async function connectAdminBus(env: NodeJS.ProcessEnv = process.env): Promise<Bus> {
  return Bus.connect({
    servers: env.NATS_URL ?? 'nats://127.0.0.1:4222',
    prefix: env.SUBJECT_PREFIX ?? 'erp',
    name: 'admin-cli',
    logger: createLogger('admin', env.LOG_LEVEL ?? 'warn'),
    requestTimeoutMs: 30_000,
    // The admin identity, when NATS requires one: the only one allowed to call `*.admin.*`.
    ...(env.NATS_USER ? { credentials: { user: env.NATS_USER, password: env.NATS_PASSWORD ?? '' } } : {}),
    ...(env.NATS_TLS_CA_FILE ? { tls: { caFile: env.NATS_TLS_CA_FILE } } : {}),
  });
}
