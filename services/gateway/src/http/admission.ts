import type { RequestHandler } from 'express';
import { Counter, Gauge } from 'prom-client';
import type { AppDeps } from './context';
import { MESSAGES, OVERLOADED_RETRY_AFTER_SECONDS, sendError } from './errors';

/**
 * Past `maxInflight` requests in progress, a new one is refused at once with 503 and Retry-After
 * instead of waiting behind the others: under overload clients get fast answers they can retry,
 * and the gateway's memory and the services' queues stay bounded instead of growing until
 * requests time out.
 */
export function admissionControl(deps: AppDeps): RequestHandler {
  const max = deps.maxInflight ?? Number.POSITIVE_INFINITY;
  let inflight = 0;
  new Gauge({
    name: 'erp_gateway_inflight_requests',
    help: 'HTTP requests the gateway is serving now',
    registers: [deps.metrics],
    collect() {
      this.set(inflight);
    },
  });
  const shed = new Counter({
    name: 'erp_gateway_requests_shed_total',
    help: 'HTTP requests refused with 503 because the gateway was serving its maximum',
    registers: [deps.metrics],
  });
  return (_req, res, next) => {
    if (inflight >= max) {
      shed.inc();
      res.setHeader('Retry-After', String(OVERLOADED_RETRY_AFTER_SECONDS));
      return sendError(res, 503, 'servidor_saturado', MESSAGES.overloaded);
    }
    inflight++;
    // 'close' comes once per response, whether it finished or the client went away.
    res.once('close', () => inflight--);
    next();
  };
}
