/**
 * One progress line per loading step: a bar with rows done, rate and elapsed time, redrawn in
 * place on a terminal (at most ten times a second) and printed once per step otherwise, so logs
 * of a CI run stay short.
 */
export interface ProgressStep {
  add(rows: number): void;
  done(note?: string): void;
}

export interface Progress {
  step(label: string, total: number): ProgressStep;
  log(line: string): void;
}

const WIDTH = 28;

function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}

function formatSeconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

export function terminalProgress(out: NodeJS.WriteStream = process.stderr): Progress {
  const tty = out.isTTY === true;
  return {
    log: (line) => out.write(`${line}\n`),
    step(label, total) {
      const started = Date.now();
      let rows = 0;
      let drawn = 0;
      const render = (final: boolean, note?: string) => {
        const elapsed = Date.now() - started;
        const ratio = total > 0 ? Math.min(1, rows / total) : 1;
        const filled = Math.round(ratio * WIDTH);
        const rate = elapsed > 0 ? Math.round((rows * 1000) / elapsed) : 0;
        const bar = `[${'#'.repeat(filled)}${'.'.repeat(WIDTH - filled)}]`;
        const text = `${label.padEnd(34)} ${bar} ${formatCount(rows).padStart(11)}/${formatCount(total)}  ${formatCount(rate)}/s  ${formatSeconds(elapsed)}${note ? `  ${note}` : ''}`;
        if (tty) out.write(`\r\x1b[K${text}${final ? '\n' : ''}`);
        else if (final) out.write(`${text}\n`);
      };
      return {
        add(n) {
          rows += n;
          if (tty && Date.now() - drawn >= 100) {
            drawn = Date.now();
            render(false);
          }
        },
        done(note) {
          render(true, note);
        },
      };
    },
  };
}

/** For tests: nothing printed. */
export const silentProgress: Progress = {
  log: () => undefined,
  step: () => ({ add: () => undefined, done: () => undefined }),
};
