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
 * How long a process may take to log that it started: the chart's startup probe gives a pod 120 s;
 * on a machine running other suites beside this one a process with telemetry on took over 30 s.
 */
const START_TIMEOUT_MS = 90_000;

/**
 * Starts a service's real entry point (`src/main.ts`) as its own process, as production does,
 * and resolves once it logs that it started. The schema must already be migrated. A process that
 * does not start in time is reported with the last line it logged, so a slow start and a hang
 * can be told apart.
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
    const timer = setTimeout(
      () => reject(new Error(`${name} did not start in ${START_TIMEOUT_MS / 1000} s; its last log line: ${output.at(-1) ?? '(none)'}`)),
      START_TIMEOUT_MS,
    );
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
