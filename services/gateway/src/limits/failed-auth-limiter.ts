import type { Redis } from 'ioredis';
import { Counter, type Registry } from 'prom-client';
import type { Logger } from '@erp/bus';
import type { AddressBlock } from './rate-limiter';

/** Counts one failure in the client's window, in one round trip; the window's key expires with it. */
const RECORD_FAILURE_LUA = `
local failures = redis.call('INCR', KEYS[1])
if failures == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return failures
`;

type RedisWithRecord = Redis & { authFailureRecord(key: string, ttlSeconds: number): Promise<number> };

export interface FailedAuthLimiterOptions {
  redis: Redis;
  keyPrefix: string;
  /** Failed authentications a client address may make per window before it is refused outright. */
  limit: number;
  windowSeconds: number;
  logger: Logger;
  metrics: Registry;
  clock?: () => number;
}

/**
 * Per client address, failed authentications in fixed windows, counted in Redis so every gateway
 * replica sees the same count. Past the limit the address gets 429 until the window ends, before
 * any key lookup: guessing keys costs Postgres nothing and gets nowhere. The check is one GET (for
 * a key already verified, part of the quota's script: see `block`) and each failure one atomic
 * INCR, so concurrent guesses from one address can exceed the limit by at most the requests in
 * flight at that moment. When Redis is unreachable nothing is blocked (the rate limiter already
 * reports the outage).
 */
export class FailedAuthLimiter {
  private readonly redis: RedisWithRecord;
  private readonly clock: () => number;
  private readonly outcomes: Counter;

  constructor(private readonly options: FailedAuthLimiterOptions) {
    this.clock = options.clock ?? Date.now;
    options.redis.defineCommand('authFailureRecord', { numberOfKeys: 1, lua: RECORD_FAILURE_LUA });
    this.redis = options.redis as RedisWithRecord;
    this.outcomes = new Counter({
      name: 'erp_gateway_auth_failures_total',
      help: 'Requests refused for their credentials: failed (401) or blocked because their address failed too often (429)',
      labelNames: ['result'],
      registers: [options.metrics],
    });
  }

  /** Seconds until `address` may try again, or 0 when it is not blocked. */
  async retryAfter(address: string): Promise<number> {
    const failures = Number(await this.redis.get(this.block(address).key).catch(() => 0));
    return failures < this.options.limit ? 0 : this.blocked();
  }

  /** Where the failures of `address` in the current window are counted, for a check made by another script. */
  block(address: string): AddressBlock {
    return { key: this.key(address, this.window().start), limit: this.options.limit };
  }

  /** Counts a request refused because its address is blocked; the seconds until its window ends. */
  blocked(): number {
    this.outcomes.inc({ result: 'blocked' });
    return Math.max(1, Math.ceil((this.window().end - this.clock()) / 1000));
  }

  async recordFailure(address: string): Promise<void> {
    this.outcomes.inc({ result: 'failed' });
    const window = this.window();
    await this.redis.authFailureRecord(this.key(address, window.start), this.options.windowSeconds + 60).catch((err: unknown) => {
      this.options.logger.debug({ err }, 'failed authentication not counted: Redis unreachable');
    });
  }

  private window(): { start: number; end: number } {
    const ms = this.options.windowSeconds * 1000;
    const start = Math.floor(this.clock() / ms) * ms;
    return { start, end: start + ms };
  }

  private key(address: string, windowStart: number): string {
    return `${this.options.keyPrefix}:af:${address}:${windowStart}`;
  }
}
