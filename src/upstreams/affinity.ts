/**
 * Cache affinity: consistent hashing with bounded load (Mirrokni, Thorup and Zadimoghaddam, "Consistent
 * Hashing with Bounded Loads", 2017; HAProxy's `hash-balance-factor`).
 *
 * A provider's prompt cache lives in one account (one credential), so the requests that share a prompt
 * prefix should keep going to the same credential. Each target (a credential) owns virtual nodes on a ring
 * of 32-bit positions; a key goes to the first target at or after its hash whose in-flight count is under the
 * bound ceil(c × (total in flight + 1) × weight / total weight) (with equal weights: ceil(c × (T + 1) / n)).
 * So a key stays on its target while that target is not crowded; a hot key spills to the next targets on the
 * ring instead of piling onto one; and removing a target moves only the keys it held (to the next target on
 * the ring, which is the second entry of their order).
 *
 * The ring of a target set is built once and kept (a few dozen sets, least recently used out); a call costs
 * a hash of the key, a binary search, and a walk of the ring until every target is seen (about n·ln n steps
 * for n targets). It allocates only the answer.
 */

export interface AffinityTarget {
  /** Stable identity of the target (e.g. the upstream credential's id): its ring positions derive from it. */
  readonly id: string;
  /** Requests this target is serving now. */
  readonly inFlight: number;
  /** Share of the ring and of the load bound (default 1). 0 (or not a positive number): never preferred, last in the order. */
  readonly weight?: number;
}

/** HAProxy's usual setting: no target takes more than 125% of its share of the requests in flight. */
export const DEFAULT_BALANCE_FACTOR = 1.25;

/** Virtual nodes for a target of average weight: enough for an even spread (about ±8% per target), few enough to build fast. */
const VNODES_PER_AVERAGE_WEIGHT = 160;
/** Rings kept: one per distinct target set (route), recently used. */
const RING_CACHE_SIZE = 64;

/**
 * A 32-bit string hash: FNV-1a over UTF-16 code units, then MurmurHash3's finalizer (FNV alone mixes the
 * last characters poorly into the high bits, and ring positions need every bit). Not for secrets.
 */
export function hash32(text: string, seed = 0x811c9dc5): number {
  let h = seed;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

interface Ring {
  readonly ids: readonly string[];
  readonly weights: Float64Array;
  /** Virtual node positions, ascending, and the target index owning each. */
  readonly positions: Uint32Array;
  readonly owners: Uint32Array;
  /** Targets with at least one virtual node. */
  readonly onRing: number;
  /** Scratch for a walk: the stamp of the walk that last saw each target, and over-bound targets in ring order. */
  readonly seen: Uint32Array;
  readonly overflow: Uint32Array;
  stamp: number;
}

const weightOf = (target: AffinityTarget): number => {
  const weight = target.weight ?? 1;
  return weight > 0 && Number.isFinite(weight) ? weight : 0;
};

function buildRing(targets: readonly AffinityTarget[]): Ring {
  const n = targets.length;
  const weights = new Float64Array(n);
  let total = 0;
  let positive = 0;
  for (let i = 0; i < n; i++) {
    weights[i] = weightOf(targets[i]!);
    total += weights[i]!;
    if (weights[i]! > 0) positive++;
  }
  const counts = Array.from(weights, (w) => (w > 0 ? Math.max(1, Math.round((VNODES_PER_AVERAGE_WEIGHT * w * positive) / total)) : 0));
  const size = counts.reduce((sum, count) => sum + count, 0);
  const nodes: { position: number; owner: number }[] = [];
  for (let i = 0; i < n; i++) {
    const id = targets[i]!.id;
    for (let v = 0; v < counts[i]!; v++) nodes.push({ position: hash32(`${id}\u0000${v}`), owner: i });
  }
  // Ties (rare) are broken by target index, so a ring is the same however often it is rebuilt.
  nodes.sort((a, b) => a.position - b.position || a.owner - b.owner);
  const positions = new Uint32Array(size);
  const owners = new Uint32Array(size);
  nodes.forEach((node, k) => {
    positions[k] = node.position;
    owners[k] = node.owner;
  });
  return { ids: targets.map((t) => t.id), weights, positions, owners, onRing: positive, seen: new Uint32Array(n), overflow: new Uint32Array(n), stamp: 0 };
}

const rings = new Map<string, Ring>();
let lastRing: Ring | undefined;

const sameTargets = (ring: Ring, targets: readonly AffinityTarget[]): boolean => {
  if (ring.ids.length !== targets.length) return false;
  for (let i = 0; i < targets.length; i++) if (ring.ids[i] !== targets[i]!.id || ring.weights[i] !== weightOf(targets[i]!)) return false;
  return true;
};

/** The ring for this target set: the last one used when it matches (no allocation), else from the cache, else built. */
function ringFor(targets: readonly AffinityTarget[]): Ring {
  if (lastRing && sameTargets(lastRing, targets)) return lastRing;
  let signature = '';
  for (const target of targets) signature += `${target.id}\u0001${weightOf(target)}\u0002`;
  let ring = rings.get(signature);
  if (ring) rings.delete(signature);
  else ring = buildRing(targets);
  rings.set(signature, ring); // most recently used last
  if (rings.size > RING_CACHE_SIZE) rings.delete(rings.keys().next().value!);
  lastRing = ring;
  return ring;
}

/** The first ring index whose position is at or after `hash` (wrapping to 0). */
function firstAtOrAfter(positions: Uint32Array, hash: number): number {
  let low = 0;
  let high = positions.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (positions[mid]! < hash) low = mid + 1;
    else high = mid;
  }
  return low === positions.length ? 0 : low;
}

/**
 * The targets for `key` in order of preference, as indices into `targets`: first the targets under their
 * load bound, in ring order from the key's position (the first of them is the bounded-load choice), then the
 * targets at or over their bound in ring order (fallbacks when the others fail), then those of weight 0.
 * With no load anywhere, the first entry depends only on the key and the ids and weights of the targets.
 * `balanceFactor` (c > 1) is how far over its fair share a target may go before the key moves on.
 *
 * `minBound` raises every bound to at least that many in flight. At low load the bound is tiny (4 requests
 * in flight over 4 targets: ceil(1.25 × 5 / 4) = 2), so pure bounded load moves keys off their home, and off
 * their prompt cache, to balance loads no upstream would notice; a floor (e.g. the concurrency one credential
 * handles without strain) keeps keys home until the load matters. 0, the default, is the published algorithm.
 */
export function affinityOrder(key: string, targets: readonly AffinityTarget[], balanceFactor: number = DEFAULT_BALANCE_FACTOR, minBound = 0): number[] {
  const n = targets.length;
  if (n <= 1) return n === 1 ? [0] : [];
  const ring = ringFor(targets);
  const order = new Array<number>(n);
  let filled = 0;
  if (ring.onRing > 0) {
    let totalInFlight = 0;
    let totalWeight = 0;
    for (let i = 0; i < n; i++) {
      totalInFlight += Math.max(0, targets[i]!.inFlight);
      totalWeight += ring.weights[i]!;
    }
    // Each target's bound is ceil(perWeight × weight): its share of the load with this request counted.
    const perWeight = (balanceFactor * (totalInFlight + 1)) / totalWeight;
    const stamp = (ring.stamp = (ring.stamp + 1) >>> 0 || 1);
    if (stamp === 1) ring.seen.fill(0); // the stamp wrapped: old marks must not match
    const { positions, owners, seen, overflow } = ring;
    let over = 0;
    let found = 0;
    for (let k = firstAtOrAfter(positions, hash32(key)), steps = 0; found < ring.onRing && steps < positions.length; steps++) {
      const owner = owners[k]!;
      if (seen[owner] !== stamp) {
        seen[owner] = stamp;
        found++;
        if (targets[owner]!.inFlight < Math.max(minBound, Math.ceil(perWeight * ring.weights[owner]!))) order[filled++] = owner;
        else overflow[over++] = owner;
      }
      if (++k === positions.length) k = 0;
    }
    for (let j = 0; j < over; j++) order[filled++] = overflow[j]!;
  }
  for (let i = 0; i < n && filled < n; i++) if (ring.weights[i] === 0) order[filled++] = i;
  return order;
}
