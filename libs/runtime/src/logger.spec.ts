import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

/** What the loggers below write to stdout, in a process of their own. */
const PROGRAM = `
const { createLogger } = require('./src/logger.ts');
createLogger('sales', 'info').info({ empresa: 7 }, 'venta creada');
createLogger('gateway', 'info').info({ authorization: 'Bearer k1', key: 'k2', token: 't1', secret: 's1',
  integracion: { token: 't2', secret: 's2', key: 'k3', authorization: 'Bearer k4' }, req: { headers: { authorization: 'Bearer k5' } } }, 'credenciales');
const warn = createLogger('returns', 'warn');
warn.info('debajo del nivel');
warn.warn('al nivel');
createLogger('returns', 'silent').error('nunca');
`;

describe('service logs', () => {
  let lines: Array<Record<string, unknown>>;
  const line = (msg: string) => lines.find((l) => l.msg === msg);

  beforeAll(async () => {
    const run = promisify(execFile);
    const args = ['--conditions=development', '--import', 'tsx', '-e', PROGRAM];
    const { stdout } = await run(process.execPath, args, { cwd: `${__dirname}/..` });
    lines = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  });

  it('writes one JSON line per entry with the service, the level by name and an ISO time', () => {
    const entry = line('venta creada');
    expect(entry).toMatchObject({ service: 'sales', level: 'info', empresa: 7 });
    expect(new Date(entry!.time as string).toISOString()).toBe(entry!.time);
  });

  it('redacts credentials at the top level, one level down and in request headers', () => {
    const entry = line('credenciales');
    expect(JSON.stringify(entry)).not.toMatch(/k[1-5]|t[12]|s[12]/);
    expect(entry).toMatchObject({
      authorization: '[redacted]',
      key: '[redacted]',
      token: '[redacted]',
      secret: '[redacted]',
      integracion: { token: '[redacted]', secret: '[redacted]', key: '[redacted]', authorization: '[redacted]' },
      req: { headers: { authorization: '[redacted]' } },
    });
  });

  it('drops entries below the configured level and writes nothing when silent', () => {
    expect(lines.map((l) => l.msg)).toEqual(['venta creada', 'credenciales', 'al nivel']);
    expect(line('al nivel')).toMatchObject({ service: 'returns', level: 'warn' });
  });
});
