import { crc32 } from 'node:zlib';
import { API_KEY_PATTERN } from '@erp/contracts';
import { bearerToken, generateApiKey, hashApiKey, keyPrefix, missingKeyReason, plausibleApiKey } from './api-key';

describe('API keys', () => {
  it('generates distinct keys that the bearer parser accepts', () => {
    const a = generateApiKey();
    const b = generateApiKey();
    expect(a).not.toBe(b);
    expect(bearerToken(`Bearer ${a}`)).toBe(a);
    expect(bearerToken(`bearer   ${a}`)).toBe(a);
  });

  it('makes keys of the documented form whose last six characters are the CRC32 of the random part', () => {
    for (let i = 0; i < 200; i++) {
      const key = generateApiKey();
      expect(key).toMatch(API_KEY_PATTERN);
      expect(plausibleApiKey(key)).toBe(true);
      // The checksum, read back as a base62 number, is zlib's CRC32 of the 30 random characters.
      const digits = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
      const sum = [...key.slice(-6)].reduce((n, c) => n * 62 + digits.indexOf(c), 0);
      expect(sum).toBe(crc32(key.slice(5, 35)));
    }
  });

  it('tells a mistyped key of the current form without a lookup, and lets keys of older forms through to it', () => {
    const key = generateApiKey();
    const typo = key.slice(0, 10) + (key[10] === 'a' ? 'b' : 'a') + key.slice(11);
    expect(plausibleApiKey(typo)).toBe(false);
    expect(plausibleApiKey(key.slice(0, -1))).toBe(false);
    expect(plausibleApiKey(`${key}0`)).toBe(false);
    expect(plausibleApiKey('demo_4f9c2b7e1a6d8305c2e9b1f7a4d6c8e0')).toBe(true);
    expect(plausibleApiKey('erp_aGVsbG8gd29ybGQgaGVsbG8gd29ybGQgaGVsbG8')).toBe(true);
  });

  it('hashes with SHA-256 and shows only a short prefix', () => {
    expect(hashApiKey('abc').toString('hex')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(keyPrefix('erp_abcdefghijkl')).toBe('erp_abcd');
    expect(keyPrefix('erpk_abcdefghijkl')).toBe('erpk_abcd');
  });

  it.each([
    undefined,
    '',
    'Bearer',
    'Bearer short',
    'Basic abcdefghijklmnopqrstuvwxyz',
    'Bearer abc def ghi jkl mno pqr',
    'Token abcdefghijklmnopqrstu',
  ])('rejects the header %p', (header) => {
    expect(bearerToken(header)).toBeUndefined();
  });

  it.each([
    [undefined, 'clave_ausente'],
    ['', 'clave_ausente'],
    ['  ', 'clave_ausente'],
    ['Bearer', 'clave_malformada'],
    ['Bearer short', 'clave_malformada'],
    ['Basic abcdefghijklmnopqrstuvwxyz', 'clave_malformada'],
  ] as const)('says why the header %p carries no key: %s', (header, reason) => {
    expect(missingKeyReason(header)).toBe(reason);
  });
});
