import { randomBytes } from 'node:crypto';
import { KeyringError, openSecrets, parseKeyring, sealSecrets, sealedWith } from './credentials';

const key = () => randomBytes(32).toString('base64');
const secrets = { clave: 'ck_1', secreto: 'cs_1', ruta: '/api/webhook/woocommerce/tok' };

describe('shop credentials sealed with the keyring', () => {
  it('round-trips under the first key, and an older key still opens what it sealed', () => {
    const old = parseKeyring(`k1:${key()}`);
    const sealed = sealSecrets(old, secrets, 'integracion:1:woocommerce');
    expect(sealed.toString('latin1')).not.toContain('cs_1');
    const rotated = parseKeyring(`k2:${key()},k1:${Buffer.from(old.keys.get('k1')!).toString('base64')}`);
    expect(openSecrets(rotated, sealed, 'integracion:1:woocommerce')).toEqual(secrets);
    const resealed = sealSecrets(rotated, secrets, 'integracion:1:woocommerce');
    expect([sealedWith(sealed), sealedWith(resealed)]).toEqual(['k1', 'k2']);
  });

  it('refuses another company, a tampered byte and a key no longer configured', () => {
    const ring = parseKeyring(`a:${key()}`);
    const sealed = sealSecrets(ring, secrets, 'integracion:1:woocommerce');
    expect(() => openSecrets(ring, sealed, 'integracion:2:woocommerce')).toThrow(KeyringError);
    const tampered = Buffer.from(sealed);
    tampered[tampered.length - 1]! ^= 1;
    expect(() => openSecrets(ring, tampered, 'integracion:1:woocommerce')).toThrow('no se pudieron descifrar');
    expect(() => openSecrets(parseKeyring(`b:${key()}`), sealed, 'integracion:1:woocommerce')).toThrow('clave a, que ya no está');
  });

  it('refuses a key that is not 32 bytes, a repeated id, and sealing without a key', () => {
    expect(() => parseKeyring(`a:${randomBytes(16).toString('base64')}`)).toThrow('32 bytes');
    expect(() => parseKeyring(`a:${key()},a:${key()}`)).toThrow('repetida');
    expect(() => sealSecrets(parseKeyring(undefined), secrets, 'x')).toThrow('PLATFORM_CREDENTIALS_KEYS');
  });
});
