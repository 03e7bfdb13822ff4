import { jetstreamManager } from '@nats-io/jetstream';
import { EXPORT_WRITERS, exportStoreName } from '@erp/bus';
import { STREAM_FAMILIES, streamName } from '@erp/contracts';

/** Deletes the JetStream streams and export stores a run made under `prefix` (those that exist). */
export async function deleteStreamsOf(nc: Parameters<typeof jetstreamManager>[0], prefix: string): Promise<void> {
  const jsm = await jetstreamManager(nc);
  const streams = [
    ...STREAM_FAMILIES.map((family) => streamName(prefix, family)),
    ...EXPORT_WRITERS.map((writer) => `OBJ_${exportStoreName(prefix, writer)}`),
  ];
  for (const stream of streams) await jsm.streams.delete(stream).catch(() => undefined);
}
