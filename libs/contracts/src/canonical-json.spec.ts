import { canonicalJson } from './canonical-json';

describe('canonicalJson', () => {
  it('writes the same text for objects whose keys were sent in another order', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: 'x' } })).toBe(
      canonicalJson({ a: { c: 'x', d: [1, { x: 1, y: 2 }] }, b: 1 }),
    );
    expect(canonicalJson({ b: 1, a: 2 })).toBe('{"a":2,"b":1}');
  });

  it('keeps the order of arrays, and tells values apart', () => {
    expect(canonicalJson([1, 2])).not.toBe(canonicalJson([2, 1]));
    expect(canonicalJson({ a: 1 })).not.toBe(canonicalJson({ a: '1' }));
    expect(canonicalJson({ a: null })).not.toBe(canonicalJson({}));
  });

  it('leaves out members that are undefined, as JSON would', () => {
    expect(canonicalJson({ a: 1, b: undefined })).toBe('{"a":1}');
    expect(canonicalJson([undefined])).toBe('[null]');
  });

  it('escapes keys and strings as JSON does', () => {
    expect(canonicalJson({ 'a"b': 'c\nd' })).toBe('{"a\\"b":"c\\nd"}');
    expect(JSON.parse(canonicalJson({ z: 'ñ', a: 1.5 }))).toEqual({ z: 'ñ', a: 1.5 });
  });
});
