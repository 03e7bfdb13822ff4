import { startLoop } from './periodic';

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Waits until `holds` (a loaded machine runs timers late), for at most two seconds. */
const eventually = async (holds: () => boolean) => {
  for (const deadline = Date.now() + 2_000; !holds() && Date.now() < deadline;) await tick(5);
  expect(holds()).toBe(true);
};

describe('startLoop', () => {
  const logger = { warn: jest.fn() };

  it('waits what each run answers, and a nudge ends the wait at once', async () => {
    const runs: number[] = [];
    const sut = startLoop('test loop', { retryMs: 10, logger }, async () => {
      runs.push(Date.now());
      return 60_000;
    });
    await eventually(() => runs.length === 1);
    await tick(50);
    expect(runs).toHaveLength(1);
    sut.nudge();
    await eventually(() => runs.length === 2);
    await sut.stop();
  });

  it('runs again right after a run during which it was nudged, never two runs at once', async () => {
    let running = 0;
    let most = 0;
    let runs = 0;
    let release: () => void = () => undefined;
    const sut = startLoop('test loop', { retryMs: 10, logger }, async () => {
      runs++;
      most = Math.max(most, ++running);
      if (runs === 1) await new Promise<void>((resolve) => (release = resolve));
      running--;
      return 60_000;
    });
    await eventually(() => runs === 1);
    sut.nudge();
    sut.nudge();
    release();
    await eventually(() => runs === 2);
    await tick(50);
    expect(runs).toBe(2);
    expect(most).toBe(1);
    await sut.stop();
  });

  it('logs a failed run and tries again after retryMs; stop waits for the run in progress', async () => {
    let runs = 0;
    let finished = false;
    let release: () => void = () => undefined;
    const sut = startLoop('test loop', { retryMs: 20, logger }, async () => {
      runs++;
      if (runs === 1) throw new Error('database away');
      await new Promise<void>((resolve) => (release = resolve));
      finished = true;
      return 60_000;
    });
    await eventually(() => runs === 2);
    expect(logger.warn).toHaveBeenCalledWith(
      { err: expect.objectContaining({ message: 'database away' }) },
      'test loop failed; will retry',
    );
    const stopping = sut.stop();
    await tick(20);
    expect(finished).toBe(false);
    release();
    await stopping;
    expect(finished).toBe(true);
    expect(runs).toBe(2);
  });
});
