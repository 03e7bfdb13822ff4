/**
 * Runs, on this machine, the container of a Pod that `kubectl run --dry-run=client -o json` made
 * (test/operations/cluster-stand-in.ts): its command and arguments, with only the environment the
 * Pod would get in the cluster, resolved from the stand-in's Secrets and ConfigMaps (env, envFrom,
 * secretKeyRef, configMapKeyRef). The image's admin CLI (/app/services/admin/dist/cli.js, built
 * from services/admin) runs from its source. A variable that points into a mounted Secret the
 * stand-in does not provide is left out, and named on stderr.
 *   node --conditions=development --import tsx test/operations/run-pod.ts POD_JSON
 * Reads STAND_IN_OBJECTS (a JSON file: { secrets: {name: {key: value}}, configMaps: {…} }).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { IPod } from 'kubernetes-models/v1/Pod';

const ROOT = path.resolve(__dirname, '..', '..');
/** Where the image keeps the admin CLI, and its source in the repository. */
const IMAGE_CLI = '/app/services/admin/dist/cli.js';
const SOURCE_CLI = path.join(ROOT, 'services', 'admin', 'src', 'cli.ts');

type Objects = { secrets: Record<string, Record<string, string>>; configMaps: Record<string, Record<string, string>> };

function fail(message: string): never {
  process.stderr.write(`run-pod: ${message}\n`);
  process.exit(2);
}

const pod = JSON.parse(fs.readFileSync(process.argv[2]!, 'utf8')) as IPod;
const objects = JSON.parse(fs.readFileSync(process.env.STAND_IN_OBJECTS!, 'utf8')) as Objects;
const container = pod.spec?.containers[0] ?? fail('the Pod has no container');
const lookup = (kind: 'secrets' | 'configMaps', name: string, key?: string): Record<string, string> | string => {
  const object = objects[kind][name] ?? fail(`no ${kind === 'secrets' ? 'Secret' : 'ConfigMap'} ${name} in the namespace`);
  if (key === undefined) return object;
  return object[key] ?? fail(`the ${kind === 'secrets' ? 'Secret' : 'ConfigMap'} ${name} has no key ${key}`);
};

const env: Record<string, string> = {};
for (const from of container.envFrom ?? []) {
  if (from.secretRef) Object.assign(env, lookup('secrets', from.secretRef.name!));
  if (from.configMapRef) Object.assign(env, lookup('configMaps', from.configMapRef.name!));
}
for (const variable of container.env ?? []) {
  const ref = variable.valueFrom;
  if (ref?.secretKeyRef) env[variable.name] = lookup('secrets', ref.secretKeyRef.name!, ref.secretKeyRef.key) as string;
  else if (ref?.configMapKeyRef) env[variable.name] = lookup('configMaps', ref.configMapKeyRef.name!, ref.configMapKeyRef.key) as string;
  else env[variable.name] = variable.value ?? '';
}
// A file of a Secret the stand-in lacks (the NATS CA: the local NATS speaks plaintext) is not there.
for (const mount of container.volumeMounts ?? []) {
  const secret = pod.spec?.volumes?.find((v) => v.name === mount.name)?.secret?.secretName;
  if (!secret || objects.secrets[secret]) continue;
  for (const [name, value] of Object.entries(env))
    if (value.startsWith(`${mount.mountPath}/`)) {
      process.stderr.write(`run-pod: ${name} left out: the Secret ${secret} mounted at ${mount.mountPath} is not provided here\n`);
      delete env[name];
    }
}

const command = [...(container.command ?? []), ...(container.args ?? [])];
if (command[0] !== 'node' || command[1] !== IMAGE_CLI) fail(`only the image's admin CLI runs here, not ${command.join(' ')}`);
const result = spawnSync(process.execPath, ['--conditions=development', '--import', 'tsx', SOURCE_CLI, ...command.slice(2)], {
  cwd: ROOT,
  env: { ...env, PATH: process.env.PATH ?? '/usr/bin:/bin' },
  stdio: 'inherit',
});
process.exit(result.status ?? 1);
