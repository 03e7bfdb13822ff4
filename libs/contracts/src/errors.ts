/**
 * The closed set of error codes that travel between services and reach the gateway.
 * The gateway maps each code to exactly one HTTP status (see `httpStatusOf` in the gateway).
 */
export const ERROR_CODES = [
  'BAD_REQUEST',
  'UNAUTHORIZED',
  'NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'CONFLICT',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'VALIDATION_FAILED',
  'BUSINESS_RULE',
  'RATE_LIMITED',
  'INTERNAL',
  'UNAVAILABLE',
  'TIMEOUT',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** Field path (`detalles.3.cantidad`) → messages. */
export type ErrorDetails = Record<string, string[]>;

/** The one error type of the domain: a code from the closed union, a message for people, details per field. */
export class AppError extends Error {
  override readonly name = 'AppError';

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetails,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  static notFound(message: string): AppError {
    return new AppError('NOT_FOUND', message);
  }

  static validation(message: string, details?: ErrorDetails): AppError {
    return new AppError('VALIDATION_FAILED', message, details);
  }

  static rule(message: string, details?: ErrorDetails): AppError {
    return new AppError('BUSINESS_RULE', message, details);
  }
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}
