import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { postEvento } from './post-evento.flow';
import { isPublicAddress, urlProblem, urlShapeProblem } from './url-guard';

const strict = { allowPrivate: false, allowHttp: false };

describe('url guard', () => {
  it('tells public addresses from loopback, private, link-local and mapped ones', () => {
    expect(isPublicAddress('93.184.216.34')).toBe(true);
    expect(isPublicAddress('2606:2800:220:1:248:1893:25c8:1946')).toBe(true);
    for (const address of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '0.0.0.0',
      '::1',
      'fc00::1',
      'fe80::1',
      '::ffff:127.0.0.1',
      '100.64.0.1',
    ]) {
      expect([address, isPublicAddress(address)]).toEqual([address, false]);
    }
  });

  it('asks for https unless plain http is allowed, and refuses credentials in the URL', () => {
    expect(urlShapeProblem('http://example.com/hook', strict)).toBe('La URL debe usar https');
    expect(urlShapeProblem('http://example.com/hook', { ...strict, allowHttp: true })).toBeNull();
    expect(urlShapeProblem('https://user:pw@example.com/hook', strict)).toMatch(/usuario/);
    expect(urlShapeProblem('https://[::1]:8443/hook', strict)).toMatch(/privada o local/);
    expect(urlShapeProblem('https://10.0.0.8/hook', { ...strict, allowPrivate: true })).toBeNull();
  });

  it('refuses a name that resolves to a loopback address', async () => {
    expect(await urlProblem('https://localhost/hook', strict)).toMatch(/privada o local/);
    expect(await urlProblem('https://localhost/hook', { ...strict, allowPrivate: true })).toBeNull();
  });
});

describe('postEvento', () => {
  let server: http.Server;
  let hits = 0;
  let answer: (res: http.ServerResponse) => void = (res) => res.end();
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      hits++;
      req.resume();
      answer(res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  const port = () => (server.address() as AddressInfo).port;
  const open = { allowPrivate: true, allowHttp: true, timeoutMs: 1_000 };

  it('never connects to a loopback receiver when private addresses are refused, checked at delivery on the resolved name', async () => {
    const before = hits;
    const outcome = await postEvento(`http://localhost:${port()}/hook`, '{}', {}, { ...open, allowPrivate: false });
    expect(outcome).toMatchObject({ status: null, error: expect.stringMatching(/privada o local/) });
    expect(hits).toBe(before);
  });

  it('does not follow a redirect: the 3xx is the outcome', async () => {
    answer = (res) => {
      res.writeHead(302, { location: 'https://example.com/' });
      res.end();
    };
    expect(await postEvento(`http://127.0.0.1:${port()}/hook`, '{}', {}, open)).toMatchObject({ status: 302, error: null });
  });

  it('reads at most 64 KiB of an endless answer', async () => {
    answer = (res) => {
      res.writeHead(200);
      const chunk = Buffer.alloc(16 * 1024, 'x');
      const pump = () => {
        while (res.write(chunk));
        res.once('drain', pump);
      };
      pump();
    };
    const outcome = await postEvento(`http://127.0.0.1:${port()}/hook`, '{}', {}, { ...open, timeoutMs: 5_000 });
    expect(outcome).toMatchObject({ status: 200, error: null });
    expect(outcome.durationMs).toBeLessThan(5_000);
  });
});
