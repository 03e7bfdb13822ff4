import { parseIdempotencyKey, requestHuella } from './idempotency-key';

describe('parseIdempotencyKey', () => {
  it('takes a bare key and the draft’s quoted Structured Field string alike', () => {
    expect(parseIdempotencyKey('8e03978e-40d5-43e8-bc93-6894a57f9324')).toEqual({ clave: '8e03978e-40d5-43e8-bc93-6894a57f9324' });
    expect(parseIdempotencyKey('"8e03978e-40d5-43e8-bc93-6894a57f9324"')).toEqual({ clave: '8e03978e-40d5-43e8-bc93-6894a57f9324' });
    expect(parseIdempotencyKey('"a\\"b\\""')).toEqual({ clave: 'a"b"' });
  });

  it('refuses an empty key, one over 255 characters and one with characters a header string cannot hold', () => {
    expect(parseIdempotencyKey('')).toEqual({ problem: 'No puede estar vacío' });
    expect(parseIdempotencyKey('""')).toEqual({ problem: 'No puede estar vacío' });
    expect(parseIdempotencyKey('k'.repeat(255))).toEqual({ clave: 'k'.repeat(255) });
    expect(parseIdempotencyKey('k'.repeat(256))).toEqual({ problem: 'Debe tener como máximo 255 caracteres' });
    expect(parseIdempotencyKey('clave-ñ')).toEqual({ problem: 'Solo puede contener caracteres ASCII visibles, sin espacios' });
    expect(parseIdempotencyKey('"una clave"')).toEqual({ problem: 'Solo puede contener caracteres ASCII visibles, sin espacios' });
  });
});

describe('requestHuella', () => {
  const request = { method: 'POST', path: '/api/external/v1/sales', query: {}, body: { a: 1, b: [1, 2] } };

  it('is the same for the same request whatever the order of its keys', () => {
    expect(requestHuella({ ...request, body: { b: [1, 2], a: 1 } })).toBe(requestHuella(request));
  });

  it('differs with another body, path or method', () => {
    const huella = requestHuella(request);
    expect(requestHuella({ ...request, body: { a: 2, b: [1, 2] } })).not.toBe(huella);
    expect(requestHuella({ ...request, body: { a: 1, b: [2, 1] } })).not.toBe(huella);
    expect(requestHuella({ ...request, path: '/api/external/v1/sales/batch' })).not.toBe(huella);
    expect(requestHuella({ ...request, method: 'PUT' })).not.toBe(huella);
  });
});
