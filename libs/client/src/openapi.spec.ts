import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');

describe('the generated client types', () => {
  it('are what openapi-typescript makes of the committed OpenAPI document (run `npm run openapi` after changing it)', () => {
    const cli = path.join(ROOT, 'node_modules/openapi-typescript/bin/cli.js');
    // Without --output the types go to stdout, exactly as they are written to the file.
    const generated = execFileSync(process.execPath, [cli, 'libs/contracts/openapi.json'], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    expect(readFileSync(path.join(ROOT, 'libs/client/src/openapi.ts'), 'utf8')).toBe(generated);
  });
});
