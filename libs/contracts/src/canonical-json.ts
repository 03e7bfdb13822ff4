/**
 * One JSON text per value whatever the order its members were sent in: object keys sorted by
 * code point, members whose value is `undefined` left out (as `JSON.stringify` does), arrays in
 * their order. Two requests are "the same body" when their canonical texts are equal, so a
 * client that reorders keys or reformats whitespace on a retry is not taken for another request.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const members = Object.keys(value)
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
  return `{${members.join(',')}}`;
}
