import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startShops } from './index';

const run = promisify(execFile);

/** A child process trusts the shops through NODE_EXTRA_CA_CERTS, and only through it. */
describe('shop simulator trust', () => {
  it('is reached by a child process given the CA file as NODE_EXTRA_CA_CERTS, and refused without it', async () => {
    const shops = await startShops();
    try {
      const script = `fetch(process.argv[1], { headers: { Authorization: 'Basic ' + Buffer.from(process.argv[2]).toString('base64') } })
        .then((r) => { console.log(r.status, r.headers.get('x-wp-totalpages')); })
        .catch((e) => { console.log('error', e.cause?.code ?? e.message); });`;
      const url = `${shops.woo.url}/wp-json/wc/v3/orders`;
      const credentials = `${shops.woo.consumerKey}:${shops.woo.consumerSecret}`;
      const trusted = await run(process.execPath, ['-e', script, url, credentials], {
        env: { ...process.env, NODE_EXTRA_CA_CERTS: shops.caFile },
      });
      expect(trusted.stdout.trim()).toBe('200 0');
      const { NODE_EXTRA_CA_CERTS: _ignored, ...without } = process.env;
      void _ignored;
      const refused = await run(process.execPath, ['-e', script, url, credentials], { env: without });
      expect(refused.stdout.trim()).toMatch(
        /^error (UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|UNABLE_TO_GET_ISSUER_CERT_LOCALLY)/,
      );
    } finally {
      await shops.close();
    }
  });
});
