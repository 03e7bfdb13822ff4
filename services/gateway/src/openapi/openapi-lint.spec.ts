import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const ROOT = path.resolve(__dirname, '../../../..');
const REDOCLY = path.join(ROOT, 'node_modules/@redocly/cli/bin/cli.js');

/** Redocly's recommended rules over the committed documents (equal to the served ones), with the exceptions `redocly.yaml` explains. */
describe('the OpenAPI documents under Redocly lint', () => {
  it.each(['libs/contracts/openapi.json', 'libs/contracts/openapi-webhooks.json'])('%s has no error and no warning', async (file) => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [REDOCLY, 'lint', file, '--config', 'redocly.yaml', '--format', 'json'],
      {
        cwd: ROOT,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      },
    ).catch((err: { stdout: string }) => err);
    const report = JSON.parse(stdout) as { totals: Record<string, number>; problems: Array<{ ruleId: string; message: string }> };
    expect(report.problems.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
    expect(report.totals).toEqual({ errors: 0, warnings: 0, ignored: 0 });
  });
});
