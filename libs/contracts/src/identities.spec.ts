import { BUS_IDENTITIES, streamFamiliesOf } from './identities';
import { webhookIntakeEvents } from './webhooks';

describe('streamFamiliesOf', () => {
  it('names the streams of the events an identity publishes and of those its durables read, in the order of STREAM_FAMILIES', () => {
    expect(streamFamiliesOf(BUS_IDENTITIES['webhook-ingest'])).toEqual(['events', 'intake']);
    expect(streamFamiliesOf(BUS_IDENTITIES.sales)).toEqual(['events']);
    // Publishes nothing; its durable reads the events stream.
    expect(streamFamiliesOf(BUS_IDENTITIES.subscriptions)).toEqual(['events']);
    const none = { serves: [], calls: [], publishes: [], consumers: {}, listens: [] };
    expect(streamFamiliesOf(none)).toEqual([]);
    expect(streamFamiliesOf({ ...none, publishes: [webhookIntakeEvents] })).toEqual(['intake']);
    expect(streamFamiliesOf({ ...none, consumers: { reader: 'intake.webhooks.delivery.received' } })).toEqual(['intake']);
  });
});
