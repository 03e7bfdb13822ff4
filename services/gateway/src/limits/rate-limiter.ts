import type { Redis } from 'ioredis';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Logger } from '@erp/bus';
import { decision, limitFor, windowAt, type RateDecision, type RateLimitRule } from '../domain/rate-limit';

/**
 * Count-and-check in one round trip: a request is counted only when it is under its limit, so
 * refused requests never eat quota, and concurrent requests can never together pass the limit.
 * With ARGV[3] = '0' the request is only checked, never counted: a conditional GET that may end
 * in a 304, which costs no quota (it is counted by a second call if it answers anything else).
 */
const CONSUME_LUA = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
if used >= tonumber(ARGV[1]) then return {0, used} end
if ARGV[3] == '0' then return {1, used} end
used = redis.call('INCR', KEYS[1])
if used == 1 then redis.call('EXPIRE', KEYS[1], ARGV[2]) end
return {1, used}
`;

/**
 * The same, after the address's failed authentications (KEYS[2]) in the same round trip: at
 * ARGV[4] or more the request is refused before it is counted ({-1, failures}).
 */
const CONSUME_UNLESS_BLOCKED_LUA = `
local failures = tonumber(redis.call('GET', KEYS[2]) or '0')
if failures >= tonumber(ARGV[4]) then return {-1, failures} end
${CONSUME_LUA}`;

type CountFlag = '1' | '0';

type RedisWithConsume = Redis & {
  rateLimitConsume(key: string, limit: number, ttlSeconds: number, count: CountFlag): Promise<[number, number]>;
  rateLimitConsumeUnlessBlocked(
    key: string,
    blockKey: string,
    limit: number,
    ttlSeconds: number,
    count: CountFlag,
    blockLimit: number,
  ): Promise<[number, number]>;
};

/** Where an address's failed authentications are counted, and how many block it (see FailedAuthLimiter). */
export interface AddressBlock {
  key: string;
  limit: number;
}

export interface RateLimiterOptions {
  redis: Redis;
  keyPrefix: string;
  rule: RateLimitRule;
  logger: Logger;
  metrics: Registry;
  clock?: () => number;
}

/**
 * Fixed-window hourly quota per company (all its API keys together) in Redis. When Redis cannot answer, a per-process
 * counter with the same rule keeps the API serving (each replica then counts on its own), and
 * the condition is logged, counted and shown by /readyz as degraded.
 */
export class RateLimiter {
  private readonly redis: RedisWithConsume;
  private readonly fallbackCounts = new Map<string, number>();
  private usingFallback = false;
  private readonly fallbackTotal: Counter;
  private readonly redisUp: Gauge;
  private readonly decisions: Counter;
  private readonly clock: () => number;

  constructor(private readonly options: RateLimiterOptions) {
    this.clock = options.clock ?? Date.now;
    // Sent with EVALSHA (falling back to EVAL once after a Redis restart flushes its script cache).
    options.redis.defineCommand('rateLimitConsume', { numberOfKeys: 1, lua: CONSUME_LUA });
    options.redis.defineCommand('rateLimitConsumeUnlessBlocked', { numberOfKeys: 2, lua: CONSUME_UNLESS_BLOCKED_LUA });
    this.redis = options.redis as RedisWithConsume;
    this.fallbackTotal = new Counter({
      name: 'erp_gateway_rate_limit_fallback_total',
      help: 'Requests whose quota was counted in-process because Redis was unreachable',
      registers: [options.metrics],
    });
    this.redisUp = new Gauge({
      name: 'erp_gateway_redis_up',
      help: '1 when the last rate-limit call reached Redis, 0 when it fell back',
      registers: [options.metrics],
    });
    this.redisUp.set(1);
    this.decisions = new Counter({
      name: 'erp_gateway_rate_limit_decisions_total',
      help: 'Quota decisions by result (allowed, refused) and limit type',
      labelNames: ['result', 'limit_type'],
      registers: [options.metrics],
    });
  }

  /** Current time in ms by the limiter's clock (injectable for tests of the hour rollover). */
  now(): number {
    return this.clock();
  }

  get degraded(): boolean {
    return this.usingFallback;
  }

  /**
   * Counts one request of `empresaId` if it is under its limit. Given an address's `block`, checks
   * it first in the same round trip: 'blocked' when the address failed too often (nothing counted).
   * While Redis is unreachable no address is blocked.
   */
  async consume(empresaId: number, dateFiltered: boolean): Promise<RateDecision>;
  async consume(empresaId: number, dateFiltered: boolean, block: AddressBlock | undefined): Promise<RateDecision | 'blocked'>;
  async consume(empresaId: number, dateFiltered: boolean, block?: AddressBlock): Promise<RateDecision | 'blocked'> {
    const result = await this.decide(empresaId, dateFiltered, block, true);
    if (result === 'blocked') return result;
    this.decisions.inc({ result: result.allowed ? 'allowed' : 'refused', limit_type: result.limitType });
    return result;
  }

  /**
   * What `consume` would decide, without counting: for a conditional GET, whose 304 costs no
   * quota. `used` is the count so far; the request is counted by `consume` once it answers
   * anything but a 304 (and refused then if others used the quota up in the meantime).
   */
  async check(empresaId: number, dateFiltered: boolean): Promise<RateDecision>;
  async check(empresaId: number, dateFiltered: boolean, block: AddressBlock | undefined): Promise<RateDecision | 'blocked'>;
  async check(empresaId: number, dateFiltered: boolean, block?: AddressBlock): Promise<RateDecision | 'blocked'> {
    const result = await this.decide(empresaId, dateFiltered, block, false);
    if (result !== 'blocked' && !result.allowed) this.decisions.inc({ result: 'refused', limit_type: result.limitType });
    return result;
  }

  private async decide(
    empresaId: number,
    dateFiltered: boolean,
    block: AddressBlock | undefined,
    count: boolean,
  ): Promise<RateDecision | 'blocked'> {
    const window = windowAt(this.clock());
    const limit = limitFor(this.options.rule, dateFiltered);
    const key = `${this.options.keyPrefix}:rl:empresa:${empresaId}:${window.start}`;
    const ttl = window.reset - window.start + 60;
    const flag: CountFlag = count ? '1' : '0';
    try {
      const [allowed, used] = block
        ? await this.redis.rateLimitConsumeUnlessBlocked(key, block.key, limit, ttl, flag, block.limit)
        : await this.redis.rateLimitConsume(key, limit, ttl, flag);
      this.markRedis(true);
      if (allowed === -1) return 'blocked';
      return decision(allowed === 1, used, limit, dateFiltered, window, false);
    } catch (err) {
      this.markRedis(false, err);
      this.fallbackTotal.inc();
      return this.consumeLocally(key, limit, dateFiltered, window, count);
    }
  }

  /** The same rule as the script, in this process only. Old windows are dropped as hours pass. */
  private consumeLocally(
    key: string,
    limit: number,
    dateFiltered: boolean,
    window: ReturnType<typeof windowAt>,
    count: boolean,
  ): RateDecision {
    for (const k of this.fallbackCounts.keys()) {
      if (!k.endsWith(`:${window.start}`)) this.fallbackCounts.delete(k);
    }
    const used = this.fallbackCounts.get(key) ?? 0;
    if (used >= limit) return decision(false, used, limit, dateFiltered, window, true);
    if (!count) return decision(true, used, limit, dateFiltered, window, true);
    this.fallbackCounts.set(key, used + 1);
    return decision(true, used + 1, limit, dateFiltered, window, true);
  }

  private markRedis(up: boolean, err?: unknown): void {
    this.redisUp.set(up ? 1 : 0);
    if (up === !this.usingFallback) return;
    this.usingFallback = !up;
    if (up) this.options.logger.info({}, 'rate limiter back on Redis');
    else this.options.logger.warn({ err }, 'Redis unreachable: rate limits counted per process until it returns');
  }
}
