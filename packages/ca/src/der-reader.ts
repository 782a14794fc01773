/**
 * A minimal DER reader that reports where each element sits in the input instead of
 * decoding it. Signatures cover exact bytes (a CSR's CertificationRequestInfo, a
 * certificate's subject), so we slice the original buffer rather than re-encode a parse.
 * Only definite lengths and single-byte tags are accepted: that is all DER X.509 uses.
 */

export interface DerElement {
  tag: number;
  /** The whole encoding: tag, length and contents. */
  der: Buffer;
  contents: Buffer;
}

export class DerError extends Error {
  override readonly name = 'DerError';
}

/** Read one element at `offset`; returns it and the offset just past it. */
export function readElement(input: Buffer, offset = 0): { element: DerElement; next: number } {
  if (offset + 2 > input.length) throw new DerError('truncated DER element');
  const tag = input[offset]!;
  if ((tag & 0x1f) === 0x1f) throw new DerError('multi-byte DER tags are not supported');
  let length = input[offset + 1]!;
  let headerLength = 2;
  if (length & 0x80) {
    const lengthBytes = length & 0x7f;
    if (lengthBytes === 0) throw new DerError('indefinite length is not DER');
    if (lengthBytes > 4) throw new DerError('DER element too long');
    if (offset + 2 + lengthBytes > input.length) throw new DerError('truncated DER length');
    length = 0;
    for (let i = 0; i < lengthBytes; i++) length = length * 256 + input[offset + 2 + i]!;
    headerLength += lengthBytes;
  }
  const end = offset + headerLength + length;
  if (end > input.length) throw new DerError('DER element runs past the end of its container');
  return {
    element: { tag, der: input.subarray(offset, end), contents: input.subarray(offset + headerLength, end) },
    next: end,
  };
}

/** Parse a buffer that must hold exactly one element. */
export function readSingle(input: Buffer): DerElement {
  const { element, next } = readElement(input, 0);
  if (next !== input.length) throw new DerError('trailing bytes after DER element');
  return element;
}

/** The elements inside a constructed element (SEQUENCE, SET, explicit tag). */
export function childrenOf(parent: DerElement): DerElement[] {
  const out: DerElement[] = [];
  for (let offset = 0; offset < parent.contents.length;) {
    const { element, next } = readElement(parent.contents, offset);
    out.push(element);
    offset = next;
  }
  return out;
}

export function expectTag(element: DerElement | undefined, tag: number, what: string): DerElement {
  if (element === undefined) throw new DerError(`missing ${what}`);
  if (element.tag !== tag) {
    throw new DerError(`${what}: expected tag 0x${tag.toString(16)}, found 0x${element.tag.toString(16)}`);
  }
  return element;
}

export function decodeOid(element: DerElement): string {
  const bytes = element.contents;
  if (bytes.length === 0) throw new DerError('empty OBJECT IDENTIFIER');
  const arcs: bigint[] = [];
  let value = 0n;
  for (const byte of bytes) {
    value = (value << 7n) | BigInt(byte & 0x7f);
    if ((byte & 0x80) === 0) {
      arcs.push(value);
      value = 0n;
    }
  }
  if ((bytes[bytes.length - 1]! & 0x80) !== 0) throw new DerError('truncated OBJECT IDENTIFIER');
  const first = arcs.shift()!;
  const head = first < 80n ? [first / 40n, first % 40n] : [2n, first - 80n];
  return [...head, ...arcs].join('.');
}

/** The bytes of a BIT STRING that must have no unused bits (signatures, public keys). */
export function bitStringBytesOf(element: DerElement): Buffer {
  if (element.contents.length === 0 || element.contents[0] !== 0) {
    throw new DerError('BIT STRING with unused bits where whole bytes were expected');
  }
  return element.contents.subarray(1);
}
