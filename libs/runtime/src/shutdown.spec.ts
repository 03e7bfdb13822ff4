import { createShutdown } from './shutdown';

describe('createShutdown', () => {
  const logger = { warn: jest.fn() };
  beforeEach(() => logger.warn.mockClear());

  it('runs the phases in order, whatever order their steps were added in, and newest first within a phase', async () => {
    const ran: string[] = [];
    const step = (name: string) => async () => void ran.push(name);
    const sut = createShutdown(logger, 5_000);
    sut.add('ops', 'ops-server', step('ops-server'));
    sut.add('databases', 'db', step('db'));
    sut.add('bus', 'nats', step('nats'));
    sut.add('workers', 'sweeper', step('sweeper'));
    sut.add('intake', 'consumers', step('consumers'));
    sut.add('workers', 'dispatcher', step('dispatcher'));
    sut.add('intake', 'http', step('http'));
    sut.add('databases', 'db-read', step('db-read'));

    expect(await sut.run()).toBe(true);
    expect(ran).toEqual(['http', 'consumers', 'dispatcher', 'sweeper', 'nats', 'db-read', 'db', 'ops-server']);
  });

  it('logs a failing step and goes on with the rest', async () => {
    const ran: string[] = [];
    const sut = createShutdown(logger, 5_000);
    sut.add('workers', 'sweeper', async () => void ran.push('sweeper'));
    sut.add('workers', 'dispatcher', async () => {
      throw new Error('database away');
    });
    sut.add('bus', 'nats', async () => void ran.push('nats'));

    expect(await sut.run()).toBe(true);
    expect(ran).toEqual(['sweeper', 'nats']);
    expect(logger.warn).toHaveBeenCalledWith(
      { err: expect.objectContaining({ message: 'database away' }), step: 'dispatcher' },
      'stop step failed',
    );
  });

  it('answers false when the steps outlast the deadline, still runs them to their end, and runs them once however often it is asked', async () => {
    const ran: string[] = [];
    const sut = createShutdown(logger, 50);
    sut.add('workers', 'slow', () => new Promise((resolve) => setTimeout(resolve, 300)));
    sut.add('ops', 'ops-server', async () => void ran.push('ops-server'));

    const began = Date.now();
    const stopping = sut.run();
    expect(sut.run()).toBe(stopping);
    expect(await stopping).toBe(false);
    expect(Date.now() - began).toBeLessThan(250);
    expect(ran).toEqual([]);
    for (const deadline = Date.now() + 2_000; ran.length === 0 && Date.now() < deadline;)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(ran).toEqual(['ops-server']);
  });
});
