/** The service that owns each subject family; also the queue group its replicas share. */
export const SERVICES = ['gateway', 'sales', 'inventory', 'returns', 'packages', 'webhook-ingest', 'subscriptions', 'exports'] as const;
export type ServiceName = (typeof SERVICES)[number];

/** Name of the one JetStream stream that carries every `events.>` subject under a prefix. */
export function streamName(prefix: string): string {
  return `${prefix.replace(/[^A-Za-z0-9_-]/g, '_')}_EVENTS`;
}
