import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { SERVICES } from '@erp/contracts';
import { dockerfileInstructions } from '../support/dockerfile';

const root = resolve(__dirname, '../..');
const instructions = dockerfileInstructions();

/** The shell of the RUN instruction that starts with `start`. */
function run(start: string): string {
  const found = instructions.find((line) => line.startsWith(`RUN ${start}`));
  if (!found) throw new Error(`the Dockerfile has no RUN ${start}`);
  return found.slice('RUN '.length);
}

/**
 * What the image keeps of a build, checked by running the Dockerfile's own step (no Docker engine
 * here): a tree shaped like the repository, every package built, then the step's shell with
 * `/out` in a temporary folder. The image must hold what the chart runs in it: the service
 * (`node dist/main.js`, `node dist/migrate.js` in /app/services/<service>) and the admin CLI
 * (`node /app/services/admin/dist/cli.js`, the audit CronJob's command in every image).
 */
describe('the image of each service', () => {
  let tree: string;
  const packages = [
    ...readdirSync(join(root, 'libs')).map((name) => `libs/${name}`),
    ...readdirSync(join(root, 'services')).map((name) => `services/${name}`),
  ].filter((dir) => existsSync(join(root, dir, 'package.json')));

  beforeAll(() => {
    tree = mkdtempSync(join(tmpdir(), 'erp-image-'));
    for (const dir of packages) {
      mkdirSync(join(tree, dir, 'dist'), { recursive: true });
      writeFileSync(join(tree, dir, 'package.json'), '{}');
      for (const entry of ['index.js', 'main.js', 'migrate.js', 'cli.js', '.tsbuildinfo'])
        writeFileSync(join(tree, dir, 'dist', entry), '');
    }
    writeFileSync(join(tree, 'package.json'), '{}');
  });
  afterAll(() => rmSync(tree, { recursive: true, force: true }));

  it.each([...SERVICES])('%s keeps its service, the admin CLI and every lib, built, without build records', (service) => {
    const out = join(tree, `out-${service}`);
    const keep = run('for dir in').replace(/\/out\b/g, out);
    execFileSync('bash', ['-euo', 'pipefail', '-c', keep], { cwd: tree, env: { ...process.env, SERVICE: service } });

    for (const entry of ['main.js', 'migrate.js']) expect(existsSync(join(out, 'services', service, 'dist', entry))).toBe(true);
    expect(existsSync(join(out, 'services/admin/dist/cli.js'))).toBe(true);
    for (const lib of packages.filter((dir) => dir.startsWith('libs/'))) expect(existsSync(join(out, lib, 'package.json'))).toBe(true);
    expect(readdirSync(join(out, 'services')).sort()).toEqual([...new Set(['admin', service])].sort());
    expect(existsSync(join(out, 'services', service, 'dist/.tsbuildinfo'))).toBe(false);
    expect(existsSync(join(out, 'package.json'))).toBe(true);
  });

  it('builds the admin CLI and installs its production dependencies beside the service’s', () => {
    expect(run('npx tsc -b')).toContain('services/admin/tsconfig.json');
    expect(run('npm ci --omit=dev')).toContain('--workspace services/admin');
  });
});
