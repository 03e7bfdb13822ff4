import { readFileSync } from 'node:fs';
import path from 'node:path';

const DOCKERFILE = path.resolve(__dirname, '../../Dockerfile');

/** The Dockerfile's instructions, continuation lines joined, comments left out. */
export function dockerfileInstructions(): string[] {
  return readFileSync(DOCKERFILE, 'utf8')
    .split('\n')
    .filter((line) => !line.startsWith('#'))
    .join('\n')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .filter((line) => line.trim().length > 0);
}

/** The environment the images run their service with: what the runtime stage's `ENV` sets, but the build argument `SERVICE`. */
export function imageEnv(instructions: readonly string[] = dockerfileInstructions()): Record<string, string> {
  const runtime = instructions.findIndex((l) => /^FROM .* AS runtime$/.test(l));
  if (runtime < 0)
    throw new Error('The Dockerfile has no stage named runtime (`FROM … AS runtime`): the environment of the images is unknown');
  const env: Record<string, string> = {};
  for (const line of instructions.slice(runtime)) {
    if (!line.startsWith('ENV ')) continue;
    for (const [, key, quoted, bare] of line.matchAll(/(\w+)=(?:"([^"]*)"|(\S+))/g)) env[key!] = quoted ?? bare!;
  }
  delete env.SERVICE;
  return env;
}
