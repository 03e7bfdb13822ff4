import type { Response } from 'express';
import type { ErrorDetails, ErrorEnvelope, Reason } from '@erp/contracts';
import { UNAVAILABLE_RETRY_AFTER_SECONDS, errorEnvelope } from '../domain/error-envelope';

// The refusals' words and shapes are the domain's; sending them is this layer's.
export * from '../domain/error-envelope';

/** Sends the error envelope. */
export function sendError(res: Response, status: number, reason: Reason, message: string, details?: ErrorDetails): void {
  sendEnvelope(res, status, errorEnvelope(status, reason, message, details));
}

export function sendEnvelope(res: Response, status: number, body: ErrorEnvelope): void {
  if (status === 503 && !res.hasHeader('Retry-After')) res.setHeader('Retry-After', String(UNAVAILABLE_RETRY_AFTER_SECONDS));
  res.status(status).json(body);
}
