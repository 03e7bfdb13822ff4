import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { connect } from '@nats-io/transport-node';
import { deleteStreamsOf, freePort, isolate, serviceEnv, type Isolation } from '@erp/testing';

const ROOT = path.resolve(__dirname, '../..');
/** `npm start`'s own command (package.json), run with this Node so that a signal reaches it, not npm. */
const START = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start
  .split(' ')
  .slice(1);
const OPS_OFFSET = 1384;

interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function start(env: Record<string, string>): Started {
  const { OPS_PORT: _ops, ...rest } = env;
  const child = spawn(process.execPath, START, { cwd: ROOT, env: { ...process.env, ...rest }, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => text, exited };
}

/** Listens on a port of 127.0.0.1 (0: any free one) until closed. */
async function occupy(port = 0): Promise<net.Server> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
  return server;
}
const portOf = (server: net.Server) => (server.address() as net.AddressInfo).port;

/** The local addresses a TCP port is listened on, from the kernel's table (IPv4 and IPv6). */
function listeningAddresses(port: number): string[] {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  return ['/proc/net/tcp', '/proc/net/tcp6'].flatMap((file) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      // state 0A is LISTEN
      .filter((cols) => cols[1]?.endsWith(`:${hex}`) && cols[3] === '0A')
      .map((cols) => cols[1]!.split(':')[0]!),
  );
}

/**
 * `npm start` as a newcomer meets it: ports from PORT (free ones with 0), a port in use named
 * before anything starts, the stack bound to loopback, a missing dependency named by its URL, and
 * Ctrl-C stopping everything.
 */
describe('npm start', () => {
  let iso: Isolation;
  let env: Record<string, string>;

  beforeAll(async () => {
    iso = await isolate('npmstart');
    env = serviceEnv(iso, { LOG_LEVEL: 'warn' });
  });
  afterAll(async () => {
    if (!iso) return;
    // The stack it started made the prefix's streams and export stores: they go with the database.
    const nc = await connect({ servers: iso.natsUrl });
    await deleteStreamsOf(nc, iso.subjectPrefix).finally(() => nc.close());
    await iso.drop();
  });

  it('names the gateway port that is taken and starts nothing', async () => {
    const taken = await occupy();
    try {
      const run = start({ ...env, PORT: String(portOf(taken)) });
      expect(await run.exited).toBe(1);
      expect(run.output()).toContain(`port ${portOf(taken)} (the gateway) on 127.0.0.1 is taken`);
      expect(run.output()).not.toContain('migrat');
    } finally {
      taken.close();
    }
  });

  it('names an ops port that is taken by the service it belongs to', async () => {
    // A base whose ops port of sales (the second service) is then taken; other tests take ports
    // meanwhile, so a base whose port is already someone's is passed over.
    let base = 0;
    let taken: net.Server | undefined;
    for (let attempt = 0; !taken && attempt < 50; attempt++) {
      base = 20_000 + Math.floor(Math.random() * 30_000);
      taken = await occupy(base + OPS_OFFSET + 1).catch(() => undefined);
    }
    try {
      const run = start({ ...env, PORT: String(base) });
      expect(await run.exited).toBe(1);
      expect(run.output()).toContain(`port ${base + OPS_OFFSET + 1} (the ops port of sales) on 127.0.0.1 is taken`);
    } finally {
      taken!.close();
    }
  });

  it('refuses a PORT that is not a port', async () => {
    const run = start({ ...env, PORT: '80a' });
    expect(await run.exited).toBe(1);
    expect(run.output()).toContain('PORT=80a is not a port this stack can use');
  });

  it('names the URL of a dependency it cannot reach', async () => {
    const url = `nats://127.0.0.1:${await freePort()}`;
    const run = start({ ...env, PORT: '0', NATS_URL: url });
    expect(await run.exited).toBe(1);
    expect(run.output()).toContain(url);
  });

  it('starts the stack on free ports bound to 127.0.0.1, answers the printed curl line, and stops on Ctrl-C', async () => {
    const run = start({ ...env, PORT: '0' });
    try {
      const deadline = Date.now() + 150_000;
      while (!run.output().includes('Ctrl-C stops everything') && run.child.exitCode === null && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 250));
      const printed = /curl -s -H "Authorization: Bearer ([^"]+)" (http:\/\/127\.0\.0\.1:(\d+)\S+)/.exec(run.output());
      expect(printed).not.toBeNull();
      const [, key, url, port] = printed!;
      const res = await fetch(url!, { headers: { authorization: `Bearer ${key}` } });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { success: boolean }).success).toBe(true);
      // Loopback only: 0100007F is 127.0.0.1 in the kernel's table.
      expect(listeningAddresses(Number(port))).toEqual(['0100007F']);
      const ops = [...run.output().matchAll(/(?:ops ports |, )([a-z-]+) (\d+)/g)].map((m) => Number(m[2]));
      expect(ops).toHaveLength(8);
      for (const p of ops) expect(listeningAddresses(p)).toEqual(['0100007F']);

      run.child.kill('SIGINT');
      expect(await run.exited).toBe(0);
      expect(listeningAddresses(Number(port))).toEqual([]);
    } finally {
      if (run.child.exitCode === null) run.child.kill('SIGKILL');
    }
  }, 180_000);
});
