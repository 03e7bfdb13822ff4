// Tests run services in-process: no span export, quiet logs unless asked for.
process.env.OTEL_SDK_DISABLED ??= 'true';
process.env.LOG_LEVEL ??= 'silent';
