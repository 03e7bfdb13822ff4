import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * A shop's credentials and our webhook path (it carries the integration's token), sealed with
 * AES-256-GCM under a key of the keyring. The keyring comes from a Secret as
 * `id:base64key[,id:base64key…]`: the first key seals, every key opens, so a key is rotated by
 * putting a new one first, re-sealing (`npm run admin -- rotate-credentials`) and then dropping
 * the old one. The sealed bytes name their key: `v1`, the id's length, the id, the 12-byte IV,
 * the 16-byte tag, the ciphertext. The associated data binds them to their company and platform.
 */
export interface ShopSecrets {
  clave?: string;
  secreto?: string;
  token?: string;
  /** Our webhook path for this integration (with its token), for re-creating a subscription. */
  ruta: string;
}

export interface Keyring {
  /** The key that seals; null when no key is configured (a shop API cannot be stored). */
  readonly current: string | null;
  readonly keys: ReadonlyMap<string, Buffer>;
}

const VERSION = Buffer.from('v1');
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class KeyringError extends Error {
  override readonly name = 'KeyringError';
}

/** Reads `id:base64key,…`; every key is 32 bytes and every id distinct. Empty or absent: no key. */
export function parseKeyring(text: string | undefined): Keyring {
  const keys = new Map<string, Buffer>();
  for (const entry of (text ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const sep = entry.indexOf(':');
    const id = sep > 0 ? entry.slice(0, sep) : '';
    if (!/^[A-Za-z0-9_-]{1,32}$/.test(id)) throw new KeyringError('Cada clave se escribe id:base64, con un id de letras, dígitos, _ o -');
    const key = Buffer.from(entry.slice(sep + 1), 'base64');
    if (key.length !== 32) throw new KeyringError(`La clave ${id} no tiene 32 bytes (AES-256)`);
    if (keys.has(id)) throw new KeyringError(`La clave ${id} está repetida`);
    keys.set(id, key);
  }
  return { current: keys.keys().next().value ?? null, keys };
}

/** The associated data of an integration's sealed credentials. */
export const credentialsContext = (empresaId: number, plataforma: string): string => `integracion:${empresaId}:${plataforma}`;

export function sealSecrets(keyring: Keyring, secrets: ShopSecrets, context: string): Buffer {
  if (!keyring.current) throw new KeyringError('No hay clave para cifrar credenciales de tiendas (PLATFORM_CREDENTIALS_KEYS)');
  const id = Buffer.from(keyring.current);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keyring.keys.get(keyring.current)!, iv);
  cipher.setAAD(Buffer.from(context));
  const body = Buffer.concat([cipher.update(JSON.stringify(secrets), 'utf8'), cipher.final()]);
  return Buffer.concat([VERSION, Buffer.from([id.length]), id, iv, cipher.getAuthTag(), body]);
}

/** The id of the key that sealed these bytes. */
export function sealedWith(sealed: Buffer): string {
  if (sealed.length < VERSION.length + 1 || !sealed.subarray(0, VERSION.length).equals(VERSION)) {
    throw new KeyringError('Credenciales cifradas con un formato desconocido');
  }
  const len = sealed[VERSION.length]!;
  return sealed.subarray(VERSION.length + 1, VERSION.length + 1 + len).toString();
}

export function openSecrets(keyring: Keyring, sealed: Buffer, context: string): ShopSecrets {
  const id = sealedWith(sealed);
  const key = keyring.keys.get(id);
  if (!key) throw new KeyringError(`Las credenciales se cifraron con la clave ${id}, que ya no está configurada`);
  let at = VERSION.length + 1 + Buffer.byteLength(id);
  const iv = sealed.subarray(at, (at += IV_BYTES));
  const tag = sealed.subarray(at, (at += TAG_BYTES));
  const decipher = createDecipheriv('aes-256-gcm', key, iv);
  decipher.setAAD(Buffer.from(context));
  decipher.setAuthTag(tag);
  try {
    return JSON.parse(Buffer.concat([decipher.update(sealed.subarray(at)), decipher.final()]).toString('utf8')) as ShopSecrets;
  } catch {
    throw new KeyringError('Las credenciales de la tienda no se pudieron descifrar (clave o datos alterados)');
  }
}
