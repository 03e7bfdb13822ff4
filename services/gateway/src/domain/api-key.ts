import { createHash, randomInt } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { API_KEY_PATTERN, API_KEY_PREFIX } from '@erp/contracts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_CHARS = 30;
const CHECKSUM_CHARS = 6;

/** A number in base62, left-padded with zeros to `width` characters. */
function base62(n: number, width: number): string {
  let out = '';
  for (let rest = n; rest > 0; rest = Math.floor(rest / 62)) out = BASE62[rest % 62] + out;
  return out.padStart(width, '0');
}

function checksum(random: string): string {
  return base62(crc32(random), CHECKSUM_CHARS);
}

/**
 * A new API key: `erpk_`, 30 random base62 characters (178 bits) and the CRC32 of those in six
 * more, as GitHub's tokens carry one: a scanner tells a real key from noise offline, and the
 * gateway refuses a mistyped one without a lookup. Shown once; only its hash is stored.
 */
export function generateApiKey(): string {
  let random = '';
  for (let i = 0; i < RANDOM_CHARS; i++) random += BASE62[randomInt(62)];
  return `${API_KEY_PREFIX}${random}${checksum(random)}`;
}

/**
 * Whether a key could be one of ours: a key of the current format must match it and its checksum;
 * any other (keys given before 1.7.0 keep their own form) is looked up as it is.
 */
export function plausibleApiKey(key: string): boolean {
  if (!key.startsWith(API_KEY_PREFIX)) return true;
  if (!API_KEY_PATTERN.test(key)) return false;
  const random = key.slice(API_KEY_PREFIX.length, API_KEY_PREFIX.length + RANDOM_CHARS);
  return key.slice(-CHECKSUM_CHARS) === checksum(random);
}

export function hashApiKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

/** What listings show of a key: enough to recognise it, too little to use it. */
export function keyPrefix(key: string): string {
  return key.slice(0, key.startsWith(API_KEY_PREFIX) ? API_KEY_PREFIX.length + 4 : 8);
}

/** The key in `Authorization: Bearer <key>`, or undefined when the header is missing or malformed. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer +([A-Za-z0-9._~+/=-]{16,200})$/i.exec(header?.trim() ?? '');
  return match?.[1];
}

/**
 * Why a request carries no key to look up: no `Authorization` header (or an empty one), or one
 * that is not `Bearer` and a key of the form keys have. Said from the header alone, so it never
 * tells whether some key exists.
 */
export function missingKeyReason(header: string | undefined): 'clave_ausente' | 'clave_malformada' {
  return header === undefined || header.trim() === '' ? 'clave_ausente' : 'clave_malformada';
}
