/**
 * BLAKE2b (RFC 7693) with a chosen digest length, unkeyed.
 *
 * Node's crypto offers only the 64-byte variant (`blake2b512`), and a truncated
 * BLAKE2b-512 is not BLAKE2b-256 (the length is mixed into the initial state).
 * Consul hashes tokens and policies with BLAKE2b-256, so this computes it directly.
 * It runs only when a token or policy is written, so clarity (BigInt words) is
 * preferred over speed; the tests check it against Node's blake2b512 at length 64.
 */

const MASK64 = (1n << 64n) - 1n;

const IV: readonly bigint[] = [
  0x6a09e667f3bcc908n, 0xbb67ae8584caa73bn, 0x3c6ef372fe94f82bn, 0xa54ff53a5f1d36f1n,
  0x510e527fade682d1n, 0x9b05688c2b3e6c1fn, 0x1f83d9abfb41bd6bn, 0x5be0cd19137e2179n,
];

/** Message word order for each round (rounds 10 and 11 reuse rows 0 and 1). */
const SIGMA: readonly (readonly number[])[] = [
  [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
  [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
  [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
  [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
  [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
  [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
  [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
  [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
  [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
  [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
];

const BLOCK = 128;

function rotr(x: bigint, n: bigint): bigint {
  return ((x >> n) | (x << (64n - n))) & MASK64;
}

function mix(v: bigint[], a: number, b: number, c: number, d: number, x: bigint, y: bigint): void {
  v[a] = (v[a] + v[b] + x) & MASK64;
  v[d] = rotr(v[d] ^ v[a], 32n);
  v[c] = (v[c] + v[d]) & MASK64;
  v[b] = rotr(v[b] ^ v[c], 24n);
  v[a] = (v[a] + v[b] + y) & MASK64;
  v[d] = rotr(v[d] ^ v[a], 16n);
  v[c] = (v[c] + v[d]) & MASK64;
  v[b] = rotr(v[b] ^ v[c], 63n);
}

function compress(h: bigint[], block: Buffer, bytesSoFar: bigint, last: boolean): void {
  const m: bigint[] = [];
  for (let i = 0; i < 16; i++) m.push(block.readBigUInt64LE(i * 8));
  const v = [...h, ...IV];
  v[12] ^= bytesSoFar & MASK64;
  v[13] ^= bytesSoFar >> 64n;
  if (last) v[14] ^= MASK64;
  for (let round = 0; round < 12; round++) {
    const s = SIGMA[round % 10];
    mix(v, 0, 4, 8, 12, m[s[0]], m[s[1]]);
    mix(v, 1, 5, 9, 13, m[s[2]], m[s[3]]);
    mix(v, 2, 6, 10, 14, m[s[4]], m[s[5]]);
    mix(v, 3, 7, 11, 15, m[s[6]], m[s[7]]);
    mix(v, 0, 5, 10, 15, m[s[8]], m[s[9]]);
    mix(v, 1, 6, 11, 12, m[s[10]], m[s[11]]);
    mix(v, 2, 7, 8, 13, m[s[12]], m[s[13]]);
    mix(v, 3, 4, 9, 14, m[s[14]], m[s[15]]);
  }
  for (let i = 0; i < 8; i++) h[i] ^= v[i] ^ v[i + 8];
}

/** The BLAKE2b digest of `data`, `outputLength` bytes long (1–64). */
export function blake2b(data: Uint8Array, outputLength: number): Buffer {
  if (!Number.isInteger(outputLength) || outputLength < 1 || outputLength > 64) {
    throw new RangeError(`BLAKE2b output length must be 1..64 bytes, got ${outputLength}`);
  }
  const h = [...IV];
  // Parameter block: digest length, no key, fanout 1, depth 1.
  h[0] ^= 0x01010000n ^ BigInt(outputLength);

  const input = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const blocks = Math.max(1, Math.ceil(input.length / BLOCK));
  for (let i = 0; i < blocks; i++) {
    const last = i === blocks - 1;
    const chunk = Buffer.alloc(BLOCK);
    input.copy(chunk, 0, i * BLOCK, Math.min(input.length, (i + 1) * BLOCK));
    const counted = last ? BigInt(input.length) : BigInt((i + 1) * BLOCK);
    compress(h, chunk, counted, last);
  }

  const out = Buffer.alloc(64);
  for (let i = 0; i < 8; i++) out.writeBigUInt64LE(h[i], i * 8);
  return out.subarray(0, outputLength);
}
