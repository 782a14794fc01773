// A query's first question exactly as it came on the wire. Labels are bytes (RFC 1035 §3.1,
// RFC 2181 §11), but dns-packet reads each label as UTF-8 text and joins them with dots: a label
// with bytes that are not UTF-8 came back as U+FFFD, and one holding a "." byte as two labels. The
// echoed question then no longer matched the one asked (longer, or a label over 63 bytes whose
// length byte reads as a compression pointer) and the answer did not decode (issue 33, finding 7).
//
// So the question's bytes are kept beside the decoded packet and written back unchanged in the
// answer, and a name that does not survive the text round trip is given to the lookups in the
// escaped presentation form (`\DDD`, as miekg/dns and so Consul do): it can match no name
// in the catalog and is answered NXDOMAIN (or REFUSED outside the domain), with its own bytes.

/** Where the first question's bytes are kept on the decoded question (not a field dns-packet knows). */
export const RAW_QUESTION = Symbol('raw question bytes');

/** The header is 12 bytes; the first question follows it. */
const HEADER_BYTES = 12;
const DOT = 0x2e;
const BACKSLASH = 0x5c;

export interface RawQuestion {
  /** Name, type and class: the bytes to echo. */
  bytes: Buffer;
  /** The name in presentation form when its labels are not text that survives decoding; else undefined. */
  escapedName: string | undefined;
}

/**
 * The first question of `msg` (which dns-packet decoded already, so its labels are in bounds).
 * Throws when its name is compressed: the only earlier bytes are the header, so a pointer there
 * is malformed (FORMERR).
 */
export function rawFirstQuestion(msg: Buffer): RawQuestion {
  const labels: Buffer[] = [];
  let offset = HEADER_BYTES;
  for (;;) {
    const len = msg[offset];
    if (len === undefined) throw new Error('question name runs past the message');
    if (len === 0) break;
    if ((len & 0xc0) !== 0) throw new Error('compressed name in the first question');
    labels.push(msg.subarray(offset + 1, offset + 1 + len));
    offset += 1 + len;
  }
  const end = offset + 1 + 4;
  if (end > msg.length) throw new Error('question runs past the message');
  const exact = labels.every(isTextLabel);
  return { bytes: msg.subarray(HEADER_BYTES, end), escapedName: exact ? undefined : labels.map(escapeLabel).join('.') };
}

/** A label that decodes to text and encodes back to the same bytes, with no dot inside. */
function isTextLabel(label: Buffer): boolean {
  if (label.includes(DOT)) return false;
  return Buffer.from(label.toString('utf8'), 'utf8').equals(label);
}

/**
 * RFC 1035 §5.1 presentation form: printable ASCII as is, "\" escaped, any other byte as \DDD —
 * a "." too (not `\.`), so that splitting the name at dots still finds its labels.
 */
function escapeLabel(label: Buffer): string {
  let out = '';
  for (const b of label) {
    if (b === BACKSLASH) out += '\\\\';
    else if (b > 0x20 && b < 0x7f && b !== DOT) out += String.fromCharCode(b);
    else out += `\\${String(b).padStart(3, '0')}`;
  }
  return out;
}
