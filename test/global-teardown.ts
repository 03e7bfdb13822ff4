import type { Infra } from '../libs/testing/src/infra';

export default async function globalTeardown(): Promise<void> {
  await (globalThis as { __ERP_INFRA__?: Infra }).__ERP_INFRA__?.stop();
}
