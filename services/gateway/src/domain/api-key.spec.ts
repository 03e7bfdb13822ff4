import { bearerToken, generateApiKey, hashApiKey, keyPrefix, missingKeyReason } from './api-key';

describe('API keys', () => {
  it('generates distinct keys that the bearer parser accepts', () => {
    const a = generateApiKey();
    const b = generateApiKey();
    expect(a).not.toBe(b);
    expect(bearerToken(`Bearer ${a}`)).toBe(a);
    expect(bearerToken(`bearer   ${a}`)).toBe(a);
  });

  it('hashes with SHA-256 and shows only a short prefix', () => {
    expect(hashApiKey('abc').toString('hex')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(keyPrefix('erp_abcdefghijkl')).toBe('erp_abcd');
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
