/**
 * Redis Cluster's hash slots (CRC16/XMODEM of the key's hash tag, modulo 16384), and for each slot a short tag
 * that hashes to it: a key named with that tag lives in the same slot as every key of the accounts that hash
 * there, so one script can touch both (the wallet epoch kept per slot, see src/billing/shared-wallets.ts).
 */
export const HASH_SLOTS = 16_384;

const TABLE = Array.from({ length: 256 }, (_, byte) => {
  let crc = byte << 8;
  for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  return crc;
});

function crc16(text: string): number {
  let crc = 0;
  for (const byte of Buffer.from(text)) crc = ((crc << 8) & 0xffff) ^ TABLE[((crc >> 8) ^ byte) & 0xff]!;
  return crc;
}

/** The slot of a key: of its hash tag (the first non-empty `{...}`) when it has one, else of the whole key. */
export function hashSlot(key: string): number {
  const open = key.indexOf('{');
  if (open !== -1) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) key = key.slice(open + 1, close);
  }
  return crc16(key) % HASH_SLOTS;
}

let tags: string[] | null = null;

/** A tag (`{tag}` in a key name) whose keys live in `slot`. The table is made once, on first use (a few ms). */
export function tagOfSlot(slot: number): string {
  if (!tags) {
    const table = new Array<string>(HASH_SLOTS);
    let missing = HASH_SLOTS;
    for (let n = 0; missing > 0; n++) {
      const tag = n.toString(36);
      const at = crc16(tag) % HASH_SLOTS;
      if (table[at] === undefined) (table[at] = tag), (missing -= 1);
    }
    tags = table;
  }
  return tags[slot]!;
}
