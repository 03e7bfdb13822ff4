/** The chaos-testing hook: die at once, as a crash or `kill -9` would, with nothing cleaned up. */
export function crash(): never {
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable');
}
