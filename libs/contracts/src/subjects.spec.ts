import { databaseUrlOf, readDatabaseUrlOf, streamOfSubject } from './subjects';

describe('where a service reads and writes its schema', () => {
  const shared = 'postgres://db/erp';
  const replica = 'postgres://db-ro/erp';

  it('gives each service the shared database and its replica unless its schema has its own', () => {
    const env = { DATABASE_URL: shared, DATABASE_URL_READ: replica };
    expect(databaseUrlOf('webhook-ingest', env, 'unused')).toBe(shared);
    expect(readDatabaseUrlOf('webhook-ingest', env)).toBe(replica);
    expect(readDatabaseUrlOf('sales', { DATABASE_URL: shared })).toBeUndefined();
  });

  it('never gives a schema moved to a server of its own the shared database’s replica, only its own', () => {
    const moved = { DATABASE_URL: shared, DATABASE_URL_READ: replica, DATABASE_URL_SALES: 'postgres://sales/erp' };
    expect(databaseUrlOf('sales', moved, 'unused')).toBe('postgres://sales/erp');
    expect(readDatabaseUrlOf('sales', moved)).toBeUndefined();
    expect(readDatabaseUrlOf('returns', moved)).toBe(replica);
    const withItsReplica = {
      ...moved,
      DATABASE_URL_READ_SALES: 'postgres://sales-ro/erp',
      DATABASE_URL_READ_WEBHOOK_INGEST: 'postgres://wi-ro/erp',
    };
    expect(readDatabaseUrlOf('sales', withItsReplica)).toBe('postgres://sales-ro/erp');
    expect(readDatabaseUrlOf('webhook-ingest', withItsReplica)).toBe('postgres://wi-ro/erp');
  });
});

describe('the stream that carries an event subject', () => {
  it('is named by the subject’s first token under the prefix, and an event of no stream is refused', () => {
    expect(streamOfSubject('erp', 'events.sales.sale.created')).toBe('erp_EVENTS');
    expect(streamOfSubject('erp.prod', 'intake.webhooks.delivery.received')).toBe('erp_prod_INTAKE');
    expect(() => streamOfSubject('erp', 'eventsx.sales.sale.created')).toThrow(/No stream carries eventsx\.sales\.sale\.created/);
  });
});
