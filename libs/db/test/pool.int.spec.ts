import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { isAppError } from '@erp/contracts';
import { isolate, type Isolation } from '@erp/testing';
import {
  CLIENT_READ_MARGIN_MS,
  UNSTARTED_RETRY_DELAY_MS,
  createPool,
  dbOverPool,
  inTransaction,
  pgErrorKind,
  sql,
  translatePgError,
} from '../src';

/**
 * A TCP relay in front of Postgres that can be cut as a lost host or a network partition cuts a
 * connection: the sockets stay open, nothing more goes through, no reset ever arrives.
 */
class Relay {
  private cut = false;
  /** Connections still to be reset as soon as they are made (a server going away). */
  private refusing = 0;
  private readonly sockets = new Set<net.Socket>();
  readonly server: net.Server;

  constructor(target: { host: string; port: number }) {
    this.server = net.createServer((client) => {
      if (this.refusing > 0) {
        this.refusing--;
        client.resetAndDestroy();
        return;
      }
      const upstream = net.connect(target.port, target.host);
      for (const [from, to] of [
        [client, upstream],
        [upstream, client],
      ] as const) {
        this.sockets.add(from);
        from.on('data', (chunk) => {
          if (!this.cut) to.write(chunk);
        });
        from.on('error', () => undefined);
        from.on('close', () => {
          this.sockets.delete(from);
          to.destroy();
        });
      }
    });
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as AddressInfo).port;
  }

  refuseNext(connections: number): void {
    this.refusing = connections;
  }

  partition(): void {
    this.cut = true;
  }

  heal(): void {
    this.cut = false;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

describe('the pool when Postgres is lost', () => {
  let iso: Isolation;
  let relay: Relay;
  let relayUrl: string;

  beforeAll(async () => {
    iso = await isolate('pool');
    const url = new URL(iso.databaseUrl);
    relay = new Relay({ host: url.hostname, port: Number(url.port || 5432) });
    url.port = String(await relay.listen());
    relayUrl = url.toString();
  });
  afterAll(async () => {
    await relay.close();
    await iso.drop();
  });

  it('fails a statement whose server stopped answering soon after its timeout, drops that connection, and serves again once the server is back', async () => {
    const pool = createPool({ connectionString: relayUrl, max: 2, statementTimeoutMs: 300 });
    const db = dbOverPool(pool);
    try {
      await sql`select 1`.execute(db);
      expect(pool.totalCount).toBe(1);

      relay.partition();
      const started = Date.now();
      const err = await sql`select 1`.execute(db).catch((e: unknown) => e);
      const waited = Date.now() - started;
      // Without a client-side limit pg would wait for ever: the server's statement_timeout never reaches it.
      expect(waited).toBeGreaterThanOrEqual(300 + CLIENT_READ_MARGIN_MS - 50);
      expect(waited).toBeLessThan(300 + CLIENT_READ_MARGIN_MS + 2_000);
      expect(pgErrorKind(err)).toBe('unavailable');
      const translated = translatePgError(err);
      expect(isAppError(translated) && translated.code).toBe('UNAVAILABLE');
      // The connection that got no answer is destroyed, not handed out again.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(pool.totalCount).toBe(0);

      relay.heal();
      const { rows } = await sql<{ ok: number }>`select 1 as ok`.execute(db);
      expect(rows[0]!.ok).toBe(1);
      expect(pool.totalCount).toBe(1);
    } finally {
      relay.heal();
      await db.destroy();
    }
  }, 20_000);

  it('puts no limit on the client when the statement has none (a migration): a statement longer than the margin completes', async () => {
    const db = dbOverPool(createPool({ connectionString: iso.databaseUrl, max: 1, statementTimeoutMs: 0 }));
    try {
      const seconds = (CLIENT_READ_MARGIN_MS + 500) / 1000;
      const { rows } = await sql<{ ok: number }>`select 1 as ok from pg_sleep(${seconds})`.execute(db);
      expect(rows).toEqual([{ ok: 1 }]);
    } finally {
      await db.destroy();
    }
  }, 20_000);

  it('gives up on a connection the server never completes after the connect timeout, as unavailable', async () => {
    // Accepts the TCP connection and never answers the startup message: a server that hangs.
    const silent = net.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const url = new URL(iso.databaseUrl);
    url.port = String((silent.address() as AddressInfo).port);
    const db = dbOverPool(createPool({ connectionString: url.toString(), max: 1, connectTimeoutMs: 300 }));
    try {
      const started = Date.now();
      const err = await sql`select 1`.execute(db).catch((e: unknown) => e);
      expect(Date.now() - started).toBeLessThan(1_500);
      const translated = translatePgError(err);
      expect(isAppError(translated) && translated.code).toBe('UNAVAILABLE');
    } finally {
      await db.destroy();
      silent.close();
    }
  });

  it('drops the connections a failover ended, idle or checked out, and the next statements get new ones', async () => {
    const pool = createPool({ connectionString: iso.databaseUrl, max: 3, applicationName: 'pool-failover' });
    const db = dbOverPool(pool);
    try {
      await Promise.all([1, 2, 3].map(() => sql`select pg_sleep(0.05)`.execute(db)));
      expect(pool.totalCount).toBe(3);
      const checkedOut = await pool.connect();
      // The server ends every connection of the pool, as a primary going away does.
      const admin = createPool({ connectionString: iso.databaseUrl, max: 1 });
      await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'pool-failover'`);
      await admin.end();
      await new Promise((resolve) => setTimeout(resolve, 200));
      const err = await checkedOut.query('select 1').catch((e: unknown) => e);
      expect(pgErrorKind(err)).toBe('unavailable');
      checkedOut.release();
      expect(pool.totalCount).toBe(0);
      const answers = await Promise.all([1, 2, 3].map(() => sql<{ ok: number }>`select 1 as ok`.execute(db)));
      expect(answers.map((a) => a.rows[0]!.ok)).toEqual([1, 1, 1]);
    } finally {
      await db.destroy();
    }
  });

  it('tries a transaction that could not begin once more, and never one that began', async () => {
    const db = dbOverPool(createPool({ connectionString: relayUrl, max: 1 }));
    try {
      await sql`create table if not exists retried (id serial primary key, n int)`.execute(db);
      await sql`truncate retried`.execute(db);
      await db.destroy().catch(() => undefined);
    } catch (err) {
      await db.destroy();
      throw err;
    }
    const fresh = () => dbOverPool(createPool({ connectionString: relayUrl, max: 1 }));
    const write = (target: typeof db, calls: { n: number }) =>
      inTransaction(target, async (trx) => {
        calls.n++;
        await sql`insert into retried (n) values (1)`.execute(trx);
      });

    // Its connection reset as it was made: nothing reached the server, one retry writes it once.
    let target = fresh();
    try {
      relay.refuseNext(1);
      const calls = { n: 0 };
      const started = Date.now();
      await write(target, calls);
      expect(calls.n).toBe(1);
      expect(Date.now() - started).toBeGreaterThanOrEqual(UNSTARTED_RETRY_DELAY_MS);
      // Two in a row: the one retry fails too, and the caller hears of it (503).
      await target.destroy();
      target = fresh();
      relay.refuseNext(2);
      const err = await write(target, calls).catch((e: unknown) => e);
      expect(pgErrorKind(err)).toBe('unavailable');
      expect(calls.n).toBe(1);
    } finally {
      relay.refuseNext(0);
      await target.destroy();
    }

    // Ended by the server after it began: not tried again, whatever it may have written.
    target = fresh();
    try {
      const calls = { n: 0 };
      const err = await inTransaction(target, async (trx) => {
        calls.n++;
        await sql`insert into retried (n) values (2)`.execute(trx);
        await sql`select pg_terminate_backend(pg_backend_pid())`.execute(trx);
      }).catch((e: unknown) => e);
      expect(pgErrorKind(err)).toBe('unavailable');
      expect(calls.n).toBe(1);
    } finally {
      await target.destroy();
    }
    const check = dbOverPool(createPool({ connectionString: iso.databaseUrl, max: 1 }));
    try {
      const { rows } = await sql<{ n: number; count: number }>`select n, count(*)::int as count from retried group by n order by n`.execute(
        check,
      );
      expect(rows).toEqual([{ n: 1, count: 1 }]);
    } finally {
      await check.destroy();
    }
  });

  it('takes a write refused by a server that is no longer the primary as unavailable, to be retried', async () => {
    const db = dbOverPool(createPool({ connectionString: iso.databaseUrl, max: 1 }));
    try {
      await sql`create table if not exists demoted (id int)`.execute(db);
      const err = await db
        .transaction()
        .execute(async (trx) => {
          await sql`set transaction read only`.execute(trx);
          await sql`insert into demoted values (1)`.execute(trx);
        })
        .catch((e: unknown) => e);
      expect((err as { code?: string }).code).toBe('25006');
      expect(pgErrorKind(err)).toBe('unavailable');
    } finally {
      await db.destroy();
    }
  });
});
