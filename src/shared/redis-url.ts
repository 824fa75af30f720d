/**
 * What REDIS_URL names: one Redis (`redis://`, `rediss://`, as ioredis reads them) or a Redis Cluster given by some of
 * its nodes: `redis-cluster://[user:password@]host:port[,host:port…]` (`rediss-cluster://` for TLS). The scheme says
 * "cluster" rather than a `?cluster=true` flag because a client that does not know the form must refuse it, not
 * connect to the first node as if it were a single Redis; the comma list is what redis-cli and most cluster clients
 * take as seed nodes. Any one live node is enough: the others are discovered with CLUSTER SLOTS.
 */
export type RedisTarget =
  | { kind: 'single'; url: string }
  | { kind: 'cluster'; nodes: { host: string; port: number }[]; username?: string; password?: string; tls: boolean };

const CLUSTER_SCHEME = /^(rediss?)-cluster:\/\/(.*)$/i;
const NODE = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?$/;

/** Throws an Error whose message says what is wrong (never echoing a password) when `url` is no Redis URL we take. */
export function parseRedisUrl(url: string): RedisTarget {
  const cluster = CLUSTER_SCHEME.exec(url);
  if (!cluster) {
    if (!/^rediss?:\/\//.test(url)) throw new Error('must be a redis://, rediss://, redis-cluster:// or rediss-cluster:// URL');
    return { kind: 'single', url };
  }
  const tls = cluster[1]!.toLowerCase() === 'rediss';
  let rest = cluster[2]!;
  const at = rest.lastIndexOf('@');
  const credentials = at >= 0 ? rest.slice(0, at) : '';
  if (at >= 0) rest = rest.slice(at + 1);
  // Options would not be read, so they are refused rather than ignored; a cluster has database 0 only.
  if (/[?#]/.test(rest)) throw new Error('redis-cluster:// URLs take no options: give user:password@host:port,host:port');
  const [hosts, path] = splitOnce(rest, '/');
  if (path !== '' && path !== '0') throw new Error('a Redis Cluster has database 0 only: end the URL after the nodes (or with /0)');
  const nodes = hosts.split(',').map((node) => {
    const match = NODE.exec(node.trim());
    if (!match) throw new Error(`redis-cluster:// needs host:port of each seed node, comma-separated; "${node.trim()}" is not one`);
    const port = match[2] === undefined ? 6379 : Number(match[2]);
    if (port < 1 || port > 65535) throw new Error(`port ${port} of a redis-cluster:// node is out of range`);
    return { host: match[1]!.replace(/^\[(.*)\]$/, '$1'), port };
  });
  const [user, password] = splitOnce(credentials, ':');
  return { kind: 'cluster', nodes, tls, ...(user ? { username: decodeURIComponent(user) } : {}), ...(password ? { password: decodeURIComponent(password) } : {}) };
}

function splitOnce(text: string, separator: string): [string, string] {
  const at = text.indexOf(separator);
  return at < 0 ? [text, ''] : [text.slice(0, at), text.slice(at + 1)];
}
