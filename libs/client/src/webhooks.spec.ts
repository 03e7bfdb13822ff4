import { Webhook } from 'standardwebhooks';
import { verifyDelivery } from './webhooks';

// Signatures made by the Standard Webhooks reference library, so the helper is checked against the spec, not itself.
const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const body = JSON.stringify({ id: 'evt_1', type: 'sale.created', timestamp: '2026-03-01T10:00:00.000Z', data: { id: 7 } });
const at = new Date('2026-03-01T10:00:05Z');
const headers = (over: Record<string, string> = {}) => ({
  'webhook-id': 'evt_1',
  'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
  'webhook-signature': new Webhook(secret).sign('evt_1', at, body),
  ...over,
});

describe('verifyDelivery', () => {
  it('returns the event of a delivery signed with the secret', () => {
    expect(verifyDelivery(secret, body, headers(), { now: at })).toMatchObject({ id: 'evt_1', type: 'sale.created', data: { id: 7 } });
  });

  it('accepts a signature among several (secret rotation)', () => {
    const h = headers();
    expect(verifyDelivery(secret, body, { ...h, 'webhook-signature': `v1,AAAA ${h['webhook-signature']}` }, { now: at }).id).toBe('evt_1');
  });

  it('refuses a changed body, another id, another secret, a stale timestamp and missing headers', () => {
    expect(() => verifyDelivery(secret, body.replace('7', '8'), headers(), { now: at })).toThrow('Firma inválida');
    expect(() => verifyDelivery(secret, body, headers({ 'webhook-id': 'evt_2' }), { now: at })).toThrow('Firma inválida');
    expect(() => verifyDelivery('whsec_' + Buffer.from('otro secreto').toString('base64'), body, headers(), { now: at })).toThrow(
      'Firma inválida',
    );
    expect(() => verifyDelivery(secret, body, headers(), { now: new Date(at.getTime() + 3_600_000) })).toThrow('tolerancia');
    expect(() => verifyDelivery(secret, body, { 'webhook-id': 'evt_1' }, { now: at })).toThrow('Faltan');
  });
});
