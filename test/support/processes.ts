import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import type { ServiceName } from '@erp/contracts';

const ROOT = path.resolve(__dirname, '../..');

export interface ServiceProcess {
  child: ChildProcess;
  /** HTTP port (the gateway only). */
  port?: number;
  opsPort: number;
  /** Every line the process wrote to stdout (its JSON log), kept for assertions on what it logs. */
  output: string[];
  exit: Promise<number | null>;
  stop(): Promise<number | null>;
}

/**
 * Starts a service's real entry point (`src/main.ts`) as its own process, as production does,
 * and resolves once it logs that it started. The schema must already be migrated.
 */
export function spawnService(name: ServiceName, env: NodeJS.ProcessEnv): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ['--conditions=development', '--import', 'tsx', `services/${name}/src/main.ts`], {
    cwd: ROOT,
    env: { ...process.env, OTEL_SDK_DISABLED: 'true', ...env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let port: number | undefined;
  const output: string[] = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start`)), 30_000);
    void exit.then((code) => reject(new Error(`${name} exited with ${code} while starting`)));
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      output.push(line);
      let entry: { msg?: string; port?: number; opsPort?: number };
      try {
        entry = JSON.parse(line);
      } catch {
        return;
      }
      if (entry.msg === 'gateway listening') port = entry.port;
      if (entry.msg === 'service started' && entry.opsPort) {
        clearTimeout(timer);
        resolve({
          child,
          port,
          opsPort: entry.opsPort,
          output,
          exit,
          stop: async () => {
            if (child.exitCode === null) child.kill('SIGTERM');
            return exit;
          },
        });
      }
    });
  });
}
