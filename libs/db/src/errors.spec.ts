import { AppError } from '@erp/contracts';
import { pgErrorKind, translatePgError } from './errors';

describe('database errors', () => {
  it.each([
    ['a unique violation', { code: '23505' }, 'unique_violation'],
    ['a value Postgres cannot take', { code: '22P05' }, 'invalid_data'],
    ['a connection refused', { code: 'ECONNREFUSED' }, 'unavailable'],
    ['a connection pg ended', new Error('Connection terminated unexpectedly'), 'unavailable'],
    ['a statement a lost server never answered', new Error('Query read timeout'), 'unavailable'],
    ['a write on a server that is no longer the primary', { code: '25006' }, 'unavailable'],
  ])('classifies %s', (_what, err, kind) => {
    expect(pgErrorKind(err)).toBe(kind);
  });

  it("leaves alone another library's error whose code is not a string, inside a transaction or out", () => {
    // A JetStream API error (an export writer's store unavailable during a NATS election) carries a number.
    const jetstream = Object.assign(new Error('JetStream system temporarily unavailable'), { code: 503 });
    expect(pgErrorKind(jetstream)).toBeUndefined();
    expect(translatePgError(jetstream)).toBe(jetstream);
    expect(pgErrorKind({ code: { nested: true } })).toBeUndefined();
    expect(translatePgError({ code: '08006' })).toBeInstanceOf(AppError);
  });
});
