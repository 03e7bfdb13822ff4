import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

export interface UrlPolicy {
  allowPrivate: boolean;
  allowHttp: boolean;
}

/** Whether an address is one a partner's public receiver can have (not loopback, private, link-local, …). */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.process(address);
  return parsed.range() === 'unicast';
}

const refused = (address: string) => `La URL apunta a una dirección privada o local (${address}), que no se permite`;

/** The problem with a URL before any lookup (scheme, IP literal), or null. */
export function urlShapeProblem(raw: string, policy: UrlPolicy): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'Debe ser una URL válida';
  }
  if (url.protocol !== 'https:' && !(policy.allowHttp && url.protocol === 'http:')) return 'La URL debe usar https';
  if (url.username || url.password) return 'La URL no puede llevar usuario ni contraseña';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(host) && !policy.allowPrivate && !isPublicAddress(host)) return refused(host);
  return null;
}

/** Resolves the URL's host now and says what is wrong with where it points, or null. */
export async function urlProblem(raw: string, policy: UrlPolicy): Promise<string | null> {
  const shape = urlShapeProblem(raw, policy);
  if (shape) return shape;
  const host = new URL(raw).hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(host) || policy.allowPrivate) return null;
  try {
    const addresses = await dns.promises.lookup(host, { all: true });
    const bad = addresses.find((a) => !isPublicAddress(a.address));
    return bad ? refused(bad.address) : null;
  } catch {
    return `No se pudo resolver el nombre ${host}`;
  }
}

/**
 * A `lookup` for http(s).request that refuses non-public addresses: checked on the address the
 * socket will connect to, at each delivery, so a name that later resolves to a private address
 * (DNS rebinding) is refused too. IP literals never reach a lookup: `urlShapeProblem` checks them.
 */
export function guardedLookup(policy: UrlPolicy): net.LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as dns.LookupAddress[];
      const bad = policy.allowPrivate ? undefined : list.find((a) => !isPublicAddress(a.address));
      if (bad) return callback(Object.assign(new Error(refused(bad.address)), { code: 'EPRIVATEADDRESS' }), '', 0);
      if (options.all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  };
}
