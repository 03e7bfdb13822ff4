/** Polls until `check` stops throwing and answers what it returned, or rethrows its last error after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T>, timeoutMs = 10_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  }
}

/** Polls until `check` answers true; throws naming `what` after `timeoutMs`. A check that throws fails at once. */
export async function until(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  everyMs = 50,
  what = 'the condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
