import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect as natsConnect } from '@nats-io/transport-node';
import { createLogger } from '@erp/runtime';
import { freePort, waitForPort } from '@erp/testing';
import { Bus, type BusOptions } from '../src';

const NATS_SERVER = '/usr/sbin/nats-server';
const logger = createLogger('tls-spec', 'silent');

/** A CA and, signed by it, a certificate for `name` (server: 127.0.0.1; client: any). */
function issue(dir: string, ca: string, name: string): { cert: string; key: string } {
  const file = (ext: string) => path.join(dir, `${name}.${ext}`);
  const openssl = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  openssl([
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    file('key'),
    '-out',
    file('csr'),
    '-subj',
    `/CN=${name}`,
  ]);
  fs.writeFileSync(file('ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  openssl([
    'x509',
    '-req',
    '-in',
    file('csr'),
    '-CA',
    `${ca}.crt`,
    '-CAkey',
    `${ca}.key`,
    '-CAcreateserial',
    '-days',
    '1',
    '-out',
    file('crt'),
    '-extfile',
    file('ext'),
  ]);
  return { cert: file('crt'), key: file('key') };
}

function newCa(dir: string, name: string): string {
  const base = path.join(dir, name);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      `${base}.key`,
      '-out',
      `${base}.crt`,
      '-days',
      '1',
      '-subj',
      `/CN=${name}`,
    ],
    { stdio: 'pipe' },
  );
  return base;
}

/** nats-server with TLS, as a production NATS would run it (NATS_TLS_* in the services' config). */
describe('the bus over TLS', () => {
  let dir: string;
  const servers: ChildProcess[] = [];
  let ca: string;
  let otherCa: string;
  let client: { cert: string; key: string };

  const startServer = async (verifyClients: boolean) => {
    const port = await freePort();
    const server = issue(dir, ca, `server-${port}`);
    const config = path.join(dir, `nats-${port}.conf`);
    fs.writeFileSync(
      config,
      `listen: "127.0.0.1:${port}"\ntls {\n  cert_file: ${JSON.stringify(server.cert)}\n  key_file: ${JSON.stringify(server.key)}\n` +
        `  ca_file: ${JSON.stringify(`${ca}.crt`)}\n  verify: ${verifyClients}\n}\n`,
    );
    servers.push(spawn(NATS_SERVER, ['-c', config], { stdio: 'ignore' }));
    await waitForPort(port, 10_000);
    return `nats://127.0.0.1:${port}`;
  };
  const connect = async (servers: string, tls?: BusOptions['tls']) => {
    const bus = await Bus.connect({ servers, prefix: 'tls', name: 'tls-spec', logger, ...(tls ? { tls } : {}) });
    await bus.nc.flush();
    await bus.drain();
  };

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'erp-nats-tls-'));
    ca = newCa(dir, 'erp-ca');
    otherCa = newCa(dir, 'other-ca');
    client = issue(dir, ca, 'client');
  });
  afterAll(() => {
    for (const server of servers) server.kill('SIGTERM');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('connects to a server whose certificate its CA signed, and to no other', async () => {
    const url = await startServer(false);
    await expect(connect(url, { caFile: `${ca}.crt` })).resolves.toBeUndefined();
    await expect(connect(url, { caFile: `${otherCa}.crt` })).rejects.toThrow();
    // Without NATS_TLS_CA_FILE the system's CAs do not know the server: no plain fallback either.
    await expect(connect(url)).rejects.toThrow();
  });

  it('presents its own certificate to a server that verifies clients', async () => {
    const url = await startServer(true);
    await expect(connect(url, { caFile: `${ca}.crt`, certFile: client.cert, keyFile: client.key })).resolves.toBeUndefined();
    // Without one the server ends the handshake (a bounded wait: the client otherwise waits out its 20 s connect timeout).
    await expect(natsConnect({ servers: url, tls: { caFile: `${ca}.crt` }, timeout: 2_000 })).rejects.toThrow();
  });
});
