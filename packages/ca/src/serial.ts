/**
 * Certificate serial numbers. The server allocates them through Raft (one counter for
 * the cluster, so they only grow); the CA only checks and encodes them.
 *
 * The text form is Consul's: the minimal big-endian bytes of the number as lower-case
 * hex pairs joined by ':' (8 → "08", 256 → "01:00"). Strings of different lengths do not
 * sort numerically, so compare with `parseSerialNumber`.
 */

/** RFC 5280 §4.1.2.2: a positive integer of at most 20 octets. */
const MAX_SERIAL = (1n << 159n) - 1n; // 20 octets once the sign byte is counted

export function checkedSerial(serial: number | bigint, what = 'serial number'): bigint {
  if (typeof serial === 'number' && !Number.isSafeInteger(serial)) {
    throw new RangeError(`${what} must be a safe integer, got ${serial}`);
  }
  const value = BigInt(serial);
  if (value <= 0n) throw new RangeError(`${what} must be positive, got ${value}`);
  if (value > MAX_SERIAL) throw new RangeError(`${what} exceeds 20 octets`);
  return value;
}

/** The magnitude bytes of a positive serial (no sign byte), as Go's big.Int.Bytes(). */
export function serialMagnitude(serial: bigint): Buffer {
  let hex = serial.toString(16);
  if (hex.length % 2 === 1) hex = '0' + hex;
  return Buffer.from(hex, 'hex');
}

/**
 * The hex of a positive serial as DER INTEGER contents, for forge: the magnitude with a
 * leading zero byte when its top bit is set, so it stays positive (two's complement).
 */
export function serialIntegerHex(serial: bigint): string {
  const hex = serialMagnitude(serial).toString('hex');
  return /^[89a-f]/.test(hex) ? '00' + hex : hex;
}

export function formatSerialNumber(serial: number | bigint): string {
  return colonHex(serialMagnitude(checkedSerial(serial)));
}

export function parseSerialNumber(text: string): bigint {
  if (!/^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2})*$/.test(text)) {
    throw new SyntaxError(`not a colon-hex serial number: ${JSON.stringify(text)}`);
  }
  return BigInt('0x' + text.replace(/:/g, ''));
}

/** Bytes as lower-case hex pairs joined by ':' (serials, key ids, fingerprints). */
export function colonHex(bytes: Buffer): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join(':');
}
