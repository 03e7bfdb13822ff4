/**
 * Dies at once, as a crash or `kill -9` would: no shutdown step, no flush, nothing cleaned up.
 * The counterpart of `runService`'s graceful stop, for the chaos tests' fault points (sales'
 * `SALES_FAULT_INJECTION`), which prove that what a crash leaves behind is put right after the
 * restart. Never called unless such a setting, off by default, asks for it.
 */
export function crash(): never {
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable');
}
