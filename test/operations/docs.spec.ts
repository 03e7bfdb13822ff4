import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { parse } from 'yaml';
import { SERVICES } from '@erp/contracts';
import { DEFAULT_CONNECTION_LIMITS } from '@erp/db';

const root = resolve(__dirname, '../..');
const documents = [
  'README.md',
  'BENCHMARKS.md',
  'deploy/README.md',
  'libs/client/README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

const anchorsOf = (file: string) =>
  new Set(
    readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => /^#{1,6} /.test(line))
      .map((line) => anchorOf(line.replace(/^#+ /, ''))),
  );

/** The relative links of a markdown text, code blocks left out. */
function linksOf(text: string): string[] {
  const prose = text.replace(/```[\s\S]*?```/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((target) => !/^[a-z]+:/.test(target));
}

describe('the documents a reader of the repository has', () => {
  it.each(documents)('%s links only to files and headings that exist in the repository', (doc) => {
    const path = join(root, doc);
    const broken: string[] = [];
    for (const link of linksOf(readFileSync(path, 'utf8'))) {
      const [target, anchor] = link.split('#') as [string, string | undefined];
      const file = target === '' ? path : resolve(dirname(path), target);
      if (!existsSync(file) || relative(root, file).startsWith('..')) broken.push(link);
      else if (anchor && file.endsWith('.md') && !anchorsOf(file).has(anchor)) broken.push(link);
    }
    expect(broken).toEqual([]);
  });

  it.each(documents)('%s points nowhere outside the repository', (doc) => {
    expect(readFileSync(join(root, doc), 'utf8')).not.toMatch(/\.\.\/shared\b/);
  });

  it('names every service in the README', () => {
    const diagram = readFileSync(join(root, 'README.md'), 'utf8')
      .split('\n')
      .find((line) => line.includes('NATS request/reply'))!;
    expect(SERVICES.filter((service) => service !== 'gateway' && !diagram.includes(service))).toEqual([]);
  });

  it('gives the runtime roles the connection limit db:roles sets, the pool size the chart gives each user', () => {
    const operations = readFileSync(join(root, 'docs/operations.md'), 'utf8').replace(/\s+/g, ' ');
    const documented = /\(`--connection-limit`, (\d+) by default/.exec(operations)?.[1];
    const values = parse(readFileSync(join(root, 'charts/erp/values.yaml'), 'utf8')) as { postgres: { pooler: { poolSize: number } } };
    expect({ documented: Number(documented), chart: values.postgres.pooler.poolSize }).toEqual({
      documented: DEFAULT_CONNECTION_LIMITS.runtime,
      chart: DEFAULT_CONNECTION_LIMITS.runtime,
    });
  });
});
