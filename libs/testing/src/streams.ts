import { JetStreamApiCodes, JetStreamApiError, jetstreamManager } from '@nats-io/jetstream';
import { EXPORT_WRITERS, exportStoreName } from '@erp/bus';
import { STREAM_FAMILIES, streamName } from '@erp/contracts';

type Connection = Parameters<typeof jetstreamManager>[0];

/** Deletes the JetStream streams and export stores a run made under `prefix` (those that exist). */
export async function deleteStreamsOf(nc: Connection, prefix: string): Promise<void> {
  const jsm = await jetstreamManager(nc);
  const streams = [
    ...STREAM_FAMILIES.map((family) => streamName(prefix, family)),
    ...EXPORT_WRITERS.map((writer) => `OBJ_${exportStoreName(prefix, writer)}`),
  ];
  for (const stream of streams) await jsm.streams.delete(stream).catch(() => undefined);
}

/** A durable consumer and what it has still to settle. */
export interface ConsumerBacklog {
  stream: string;
  name: string;
  /** Events not yet delivered to it. */
  pending: number;
  /** Events delivered and neither acknowledged nor terminated yet. */
  unacknowledged: number;
}

/** Every consumer of the streams under `prefix` (those that exist), with what it has still to settle. */
export async function consumerBacklogs(nc: Connection, prefix: string): Promise<ConsumerBacklog[]> {
  const jsm = await jetstreamManager(nc);
  const backlogs: ConsumerBacklog[] = [];
  for (const stream of STREAM_FAMILIES.map((family) => streamName(prefix, family))) {
    try {
      for await (const info of jsm.consumers.list(stream))
        backlogs.push({ stream, name: info.name, pending: info.num_pending, unacknowledged: info.num_ack_pending });
    } catch (err) {
      if (!(err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound)) throw err;
    }
  }
  return backlogs;
}
