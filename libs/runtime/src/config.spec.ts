import { z } from 'zod';
import { BaseConfig, loadConfig } from './config';

describe('service configuration from the environment', () => {
  it('fills every unset key with its default and reads numbers from their text', () => {
    const config = loadConfig(BaseConfig, { DB_POOL_MAX: '25', OPS_PORT: '0', SHUTDOWN_TIMEOUT_MS: '500' });
    expect(config).toMatchObject({
      LOG_LEVEL: 'info',
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/erp',
      NATS_URL: 'nats://127.0.0.1:4222',
      SUBJECT_PREFIX: 'erp',
      REQUEST_TIMEOUT_MS: 10_000,
      DB_POOL_MAX: 25,
      OPS_PORT: 0,
      SHUTDOWN_TIMEOUT_MS: 500,
    });
  });

  it('keeps the keys a service adds to the base schema', () => {
    const ServiceConfig = BaseConfig.extend({ PORT: z.coerce.number().int().default(3000), API_NAME: z.string() });
    const config = loadConfig(ServiceConfig, { API_NAME: 'socios', LOG_LEVEL: 'warn' });
    expect(config).toMatchObject({ PORT: 3000, API_NAME: 'socios', LOG_LEVEL: 'warn', SUBJECT_PREFIX: 'erp' });
  });

  it('hands back a frozen object', () => {
    const config = loadConfig(BaseConfig, {});
    expect(Object.isFrozen(config)).toBe(true);
    expect(() => Object.assign(config, { DB_POOL_MAX: 1 })).toThrow(TypeError);
  });

  it('names every bad key in one error and never echoes a value', () => {
    const load = () =>
      loadConfig(BaseConfig, {
        DATABASE_URL: 'clave-secreta-no-es-url',
        DB_POOL_MAX: '0',
        SUBJECT_PREFIX: 'erp.prod',
        LOG_LEVEL: 'verbose',
        REQUEST_TIMEOUT_MS: '50',
      });
    expect(load).toThrow(/^Invalid configuration: /);
    const message = (() => {
      try {
        load();
        return '';
      } catch (err) {
        return (err as Error).message;
      }
    })();
    for (const key of ['DATABASE_URL', 'DB_POOL_MAX', 'SUBJECT_PREFIX', 'LOG_LEVEL', 'REQUEST_TIMEOUT_MS'])
      expect(message).toContain(`${key}: `);
    expect(message).not.toContain('clave-secreta');
    expect(message).not.toContain('erp.prod');
  });

  it('refuses a pool, a port or a deadline out of range', () => {
    expect(() => loadConfig(BaseConfig, { DB_POOL_MAX: '201' })).toThrow('DB_POOL_MAX');
    expect(() => loadConfig(BaseConfig, { OPS_PORT: '65536' })).toThrow('OPS_PORT');
    expect(() => loadConfig(BaseConfig, { SHUTDOWN_TIMEOUT_MS: '99' })).toThrow('SHUTDOWN_TIMEOUT_MS');
    expect(() => loadConfig(BaseConfig, { DB_POOL_MAX: '2.5' })).toThrow('DB_POOL_MAX');
  });
});
