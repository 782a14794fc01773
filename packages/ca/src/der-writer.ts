/**
 * The few DER encoders X.509 needs. Each returns the complete encoding (tag, length,
 * contents) as a Buffer, so structures are built by nesting calls and already-encoded
 * parts (a subject Name, a SubjectPublicKeyInfo copied from another certificate) are
 * spliced in byte-for-byte, which keeps issuer/subject comparisons exact.
 *
 * We write our own rather than use node-forge's pki because forge can neither read nor
 * write EC keys; Node's crypto does all key work and signing.
 */

export const TAG = {
  BOOLEAN: 0x01,
  INTEGER: 0x02,
  BIT_STRING: 0x03,
  OCTET_STRING: 0x04,
  NULL: 0x05,
  OID: 0x06,
  UTF8_STRING: 0x0c,
  SEQUENCE: 0x30,
  SET: 0x31,
  UTC_TIME: 0x17,
  GENERALIZED_TIME: 0x18,
} as const;

export function tlv(tag: number, contents: Buffer): Buffer {
  return Buffer.concat([Buffer.from([tag]), encodeLength(contents.length), contents]);
}

function encodeLength(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  const bytes: number[] = [];
  for (let n = length; n > 0; n = Math.floor(n / 256)) bytes.unshift(n & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

export function sequence(...items: Buffer[]): Buffer {
  return tlv(TAG.SEQUENCE, Buffer.concat(items));
}

export function set(...items: Buffer[]): Buffer {
  return tlv(TAG.SET, Buffer.concat(items));
}

/** Context-specific constructed tag `[n]` around already-encoded items (EXPLICIT tagging). */
export function explicit(n: number, ...items: Buffer[]): Buffer {
  return tlv(0xa0 | n, Buffer.concat(items));
}

/** Context-specific primitive tag `[n]` replacing the value's own tag (IMPLICIT tagging). */
export function implicitPrimitive(n: number, contents: Buffer): Buffer {
  return tlv(0x80 | n, contents);
}

export function boolean(value: boolean): Buffer {
  return tlv(TAG.BOOLEAN, Buffer.from([value ? 0xff : 0x00]));
}

export function nullValue(): Buffer {
  return tlv(TAG.NULL, Buffer.alloc(0));
}

/** A non-negative INTEGER in its minimal two's-complement form (a leading 0x00 when the top bit is set). */
export function unsignedInteger(value: bigint): Buffer {
  if (value < 0n) throw new RangeError('unsignedInteger: negative value');
  return tlv(TAG.INTEGER, unsignedIntegerContents(value));
}

export function unsignedIntegerContents(value: bigint): Buffer {
  let hex = value.toString(16);
  if (hex.length % 2 === 1) hex = '0' + hex;
  const magnitude = Buffer.from(hex, 'hex');
  return (magnitude[0]! & 0x80) !== 0 ? Buffer.concat([Buffer.from([0]), magnitude]) : magnitude;
}

export function octetString(contents: Buffer): Buffer {
  return tlv(TAG.OCTET_STRING, contents);
}

/** A BIT STRING whose length is a whole number of bytes (all X.509 uses except KeyUsage). */
export function bitStringBytes(contents: Buffer): Buffer {
  return tlv(TAG.BIT_STRING, Buffer.concat([Buffer.from([0]), contents]));
}

/**
 * A named-bit BIT STRING (KeyUsage): bit 0 is the most significant bit of the first byte;
 * DER drops trailing zero bits and records how many bits of the last byte are unused.
 */
export function namedBits(bits: readonly number[]): Buffer {
  if (bits.length === 0) return tlv(TAG.BIT_STRING, Buffer.from([0]));
  const highest = Math.max(...bits);
  const bytes = Buffer.alloc(Math.floor(highest / 8) + 1);
  for (const bit of bits) bytes[bit >> 3]! |= 0x80 >> (bit & 7);
  const unused = 7 - (highest & 7);
  return tlv(TAG.BIT_STRING, Buffer.concat([Buffer.from([unused]), bytes]));
}

export function oid(dotted: string): Buffer {
  const arcs = dotted.split('.').map((arc) => BigInt(arc));
  if (arcs.length < 2) throw new Error(`OID needs at least two arcs: ${dotted}`);
  const body: number[] = [...base128(arcs[0]! * 40n + arcs[1]!)];
  for (const arc of arcs.slice(2)) body.push(...base128(arc));
  return tlv(TAG.OID, Buffer.from(body));
}

function base128(value: bigint): number[] {
  const out = [Number(value & 0x7fn)];
  for (let v = value >> 7n; v > 0n; v >>= 7n) out.unshift(Number(v & 0x7fn) | 0x80);
  return out;
}

export function utf8String(value: string): Buffer {
  return tlv(TAG.UTF8_STRING, Buffer.from(value, 'utf8'));
}

/** RFC 5280 §4.1.2.5: UTCTime through 2049, GeneralizedTime from 2050; always UTC, whole seconds. */
export function time(date: Date): Buffer {
  const year = date.getUTCFullYear();
  if (!(year >= 1950 && year <= 9999)) throw new RangeError(`certificate time out of range: year ${year}`);
  const iso = date.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const digits = iso.slice(0, 19).replace(/[-T:]/g, '') + 'Z'; // YYYYMMDDHHMMSSZ
  if (year < 2050) return tlv(TAG.UTC_TIME, Buffer.from(digits.slice(2), 'ascii'));
  return tlv(TAG.GENERALIZED_TIME, Buffer.from(digits, 'ascii'));
}
