import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpDrain, type DrainTimings } from './drain';

/** A server as the gateway's: keep-alive kept long, each answer after `delayMs` (0: at once). */
async function serve(timings: Partial<DrainTimings> = {}, delayMs = 0): Promise<{ server: http.Server; drain: HttpDrain; url: string }> {
  const server = http.createServer((_req, res) => {
    const answer = () => {
      res.setHeader('Content-Type', 'application/json');
      res.end('{"ok":true}');
    };
    if (delayMs > 0) setTimeout(answer, delayMs);
    else answer();
  });
  server.keepAliveTimeout = 65_000;
  const drain = new HttpDrain(server, { quietMs: 1_000, maxMs: 5_000, sweepMs: 20, ...timings });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, drain, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
}

interface Answer {
  status?: number;
  connection?: string;
  error?: string;
}

/** One GET through `agent`: its status and Connection header, or the network error in its place. */
function get(url: string, agent: http.Agent): Promise<Answer> {
  return new Promise((resolve) => {
    const req = http.get(url, { agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection as string }));
      res.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
  });
}

describe('HttpDrain: the gateway stops without resetting a connection', () => {
  it('answers a request sent on an idle keep-alive connection as the stop begins, with Connection: close', async () => {
    const { server, drain, url } = await serve();
    const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
    try {
      // Eight connections, each idle after one answer, as a client's pool between two requests.
      const first = await Promise.all(Array.from({ length: 8 }, () => get(url, agent)));
      expect(first.map((a) => a.status)).toEqual(Array(8).fill(200));
      expect(Object.values(agent.freeSockets).flat()).toHaveLength(8);
      // The stop begins; in the same instant the client sends its next requests on those idle
      // connections. Closing idle connections at the stop resets every one of them (ECONNRESET).
      const stopped = drain.stop();
      const during = await Promise.all(Array.from({ length: 8 }, () => get(url, agent)));
      expect(during).toEqual(Array(8).fill({ status: 200, connection: 'close' }));
      await stopped;
      expect(server.listening).toBe(false);
    } finally {
      agent.destroy();
      server.close();
    }
  });

  it('marks the answers in progress when the stop begins with Connection: close', async () => {
    const { server, drain, url } = await serve({}, 200);
    const agent = new http.Agent({ keepAlive: true });
    try {
      const answers = Array.from({ length: 4 }, () => get(url, agent));
      await new Promise((resolve) => setTimeout(resolve, 50)); // the four are in progress
      const stopped = drain.stop();
      expect(await Promise.all(answers)).toEqual(Array(4).fill({ status: 200, connection: 'close' }));
      await stopped;
    } finally {
      agent.destroy();
      server.close();
    }
  });

  it('serves while requests still come, then closes once none has come for quietMs', async () => {
    const { server, drain, url } = await serve({ quietMs: 1_000, maxMs: 5_000 });
    const agent = new http.Agent({ keepAlive: true });
    try {
      const began = performance.now();
      const stopped = drain.stop().then(() => performance.now() - began);
      const late: Answer[] = [];
      for (let i = 0; i < 6; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        late.push(await get(url, agent));
      }
      // Each of them answered (a new connection each time: the last answer closed the previous one).
      expect(late).toEqual(Array(6).fill({ status: 200, connection: 'close' }));
      const took = await stopped;
      expect(took).toBeGreaterThanOrEqual(600 + 1_000 - 20);
      expect(took).toBeLessThan(600 + 1_000 + 2_000);
      expect(await get(url, agent)).toEqual({ error: 'ECONNREFUSED' });
    } finally {
      agent.destroy();
      server.close();
    }
  });

  it('stops serving after maxMs even while requests keep coming', async () => {
    const { server, drain, url } = await serve({ quietMs: 200, maxMs: 500 });
    const agent = new http.Agent({ keepAlive: true });
    let going = true;
    try {
      const pounding = (async () => {
        while (going) await get(url, agent);
      })();
      const began = performance.now();
      await drain.stop();
      expect(performance.now() - began).toBeLessThan(500 + 2_000);
      going = false;
      await pounding;
    } finally {
      going = false;
      agent.destroy();
      server.close();
    }
  });

  it('closes a keep-alive connection whose answer began before the stop once it goes idle', async () => {
    const { server, drain, url } = await serve({ quietMs: 100 });
    const agent = new http.Agent({ keepAlive: true });
    try {
      expect(await get(url, agent)).toEqual({ status: 200, connection: 'keep-alive' });
      const [socket] = Object.values(agent.freeSockets).flat();
      const ended = new Promise<string>((resolve) => {
        socket!.once('close', (hadError) => resolve(hadError ? 'reset' : 'closed'));
      });
      await drain.stop(); // not 65 s of keep-alive: the idle connection was closed, cleanly
      expect(await ended).toBe('closed');
    } finally {
      agent.destroy();
      server.close();
    }
  });

  it('loses no request of keep-alive clients that leave each server as it is told to stop (twenty replacements)', async () => {
    // As the reliability run's rolling restart: clients pick a server from a rotation for each
    // request over pooled keep-alive connections (fetch's); a server leaves the rotation, then is
    // stopped at once, while requests that picked it a moment before are still on their way.
    const servers = [await serve({}, 2), await serve({}, 2)];
    let rotation = servers.map((s) => s.url);
    const errors: Record<string, number> = {};
    let answered = 0;
    let going = true;
    let n = 0;
    const client = async () => {
      while (going) {
        const url = rotation[n++ % rotation.length]!;
        try {
          const res = await fetch(url);
          await res.text();
          answered++;
        } catch (err) {
          const code = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message;
          errors[code] = (errors[code] ?? 0) + 1;
        }
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 2));
      }
    };
    const clients = Array.from({ length: 16 }, client);
    const stops: Array<Promise<void>> = [];
    try {
      for (let round = 0; round < 20; round++) {
        await new Promise((resolve) => setTimeout(resolve, 150));
        const successor = await serve({}, 2);
        const leaving = servers.find((s) => s.url === rotation[0])!;
        servers.push(successor);
        rotation = [rotation[1]!, successor.url];
        stops.push(leaving.drain.stop());
      }
      await Promise.all(stops);
    } finally {
      going = false;
      await Promise.all(clients);
      for (const s of servers) s.server.close();
    }
    expect(answered).toBeGreaterThan(1_000);
    expect(errors).toEqual({});
  }, 30_000);
});
