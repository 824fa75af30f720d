import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * Where webhooks may be sent (docs/webhooks.md, URL rules): https only, no credentials, a bounded length, and
 * no address inside our network or the cloud's (private, loopback, link-local, CGNAT, unique-local IPv6,
 * multicast, documentation and metadata ranges). Checked when an endpoint is saved and again at each
 * delivery after DNS resolution; the delivery connects to the very address checked (deliver.ts), so a
 * name cannot resolve to a public address at registration and a private one later (DNS rebinding).
 * `allowInsecure` (WEBHOOKS_ALLOW_INSECURE_URLS, development and tests only) lifts the scheme and address rules.
 */
export const MAX_URL_LENGTH = 2048;

const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128], ['::1', 128], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001:db8::', 32], ['2002::', 16],
  ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const) blocked.addSubnet(net, prefix, 'ipv6');

/** Names that always mean "inside": the cloud metadata services and localhost. */
const BLOCKED_NAMES = [/^localhost$/, /\.localhost$/, /^metadata\.google\.internal$/, /^metadata$/, /^instance-data(\.ec2\.internal)?$/];

export class UrlRefused extends Error {}

/** True when an IP address is one a webhook may not reach. */
export function isForbiddenAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family !== 6) return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return blocked.check(mapped[1]!, 'ipv4');
  return blocked.check(address, 'ipv6');
}

/** The URL's form: throws UrlRefused with a reason a customer can act on. Answers the parsed URL. */
export function checkUrlForm(raw: string, allowInsecure: boolean): URL {
  if (raw.length > MAX_URL_LENGTH) throw new UrlRefused(`The URL must be at most ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UrlRefused('Not a valid URL');
  }
  if (url.protocol !== 'https:' && !(allowInsecure && url.protocol === 'http:')) throw new UrlRefused('The URL must start with https://');
  if (url.username || url.password) throw new UrlRefused('The URL must not contain credentials (user:password@)');
  if (url.hash) throw new UrlRefused('The URL must not contain a #fragment');
  const host = hostOf(url);
  if (!allowInsecure) {
    if (BLOCKED_NAMES.some((name) => name.test(host))) throw new UrlRefused(`The host ${host} is not reachable from the internet`);
    if (isIP(host) && isForbiddenAddress(host)) throw new UrlRefused(`The address ${host} is private, local or reserved`);
  }
  return url;
}

/** The URL's host without IPv6 brackets or a trailing dot, lowercased. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
}

export type Resolver = (host: string) => Promise<{ address: string; family: number }[]>;

export const systemResolver: Resolver = (host) => lookup(host, { all: true, verbatim: true });

/**
 * Resolves the host and checks every address it has (a name with one private address among public ones is
 * refused: which one a client picks is not ours to know). Answers the address to connect to.
 */
export async function resolveAllowed(url: URL, allowInsecure: boolean, resolve: Resolver = systemResolver): Promise<{ address: string; family: number }> {
  const host = hostOf(url);
  if (isIP(host)) {
    if (!allowInsecure && isForbiddenAddress(host)) throw new UrlRefused(`The address ${host} is private, local or reserved`);
    return { address: host, family: isIP(host) };
  }
  let addresses: { address: string; family: number }[];
  try {
    addresses = await resolve(host);
  } catch {
    throw new UrlRefused(`The host ${host} could not be resolved`);
  }
  if (!addresses.length) throw new UrlRefused(`The host ${host} could not be resolved`);
  if (!allowInsecure) {
    const bad = addresses.find((a) => isForbiddenAddress(a.address));
    if (bad) throw new UrlRefused(`The host ${host} resolves to a private, local or reserved address`);
  }
  return addresses[0]!;
}
