// The DNS wire format, through dns-packet (docs/dependencies.md): decode a query, encode an
// answer, measure one. Only the few shapes the DNS interface uses are typed here (dns-packet
// ships no types of its own); nothing else in dns/ touches bytes. The first question is echoed
// as the bytes it came in (question-bytes.ts), not as dns-packet would write its decoded text, and
// names are compressed (name-compression.ts: dns-packet never compresses).
import { compressNames } from './name-compression';
import { RAW_QUESTION, rawFirstQuestion } from './question-bytes';

export type RecordType = 'A' | 'AAAA' | 'CNAME' | 'SRV' | 'TXT' | 'SOA' | 'NS' | 'OPT' | 'ANY' | 'PTR' | 'MX' | 'AXFR' | 'IXFR' | string;

export interface Question {
  name: string;
  type: RecordType;
  class?: string;
  /** A decoded query's first question: its bytes, echoed as they are by encode. */
  [RAW_QUESTION]?: Buffer;
}

export interface SrvData {
  priority: number;
  weight: number;
  port: number;
  target: string;
}

export interface SoaData {
  mname: string;
  rname: string;
  serial: number;
  refresh: number;
  retry: number;
  expire: number;
  minimum: number;
}

/** EDNS client subnet (RFC 7871), option code 8. */
export interface ClientSubnetOption {
  code: 'CLIENT_SUBNET' | 8;
  family?: number;
  sourcePrefixLength?: number;
  scopePrefixLength?: number;
  ip?: string;
}

export type OptOption = ClientSubnetOption | { code: string | number; data?: Buffer };

export interface OptRecord {
  type: 'OPT';
  name: '.';
  udpPayloadSize: number;
  flags?: number;
  options: OptOption[];
}

export interface DataRecord {
  type: Exclude<RecordType, 'OPT'>;
  name: string;
  ttl: number;
  class: 'IN';
  data: string | string[] | SrvData | SoaData;
}

export type ResourceRecord = DataRecord | OptRecord;

export interface Packet {
  id: number;
  type: 'query' | 'response';
  /** Every header bit but QR: opcode, AA, TC, RD, RA, AD, CD and the rcode. */
  flags: number;
  opcode?: string;
  rcode?: string;
  flag_rd?: boolean;
  questions: Question[];
  answers: ResourceRecord[];
  authorities: ResourceRecord[];
  additionals: ResourceRecord[];
}

interface DnsPacketModule {
  decode(buf: Buffer): Packet;
  encode(packet: Packet): Buffer;
  encodingLength(packet: Packet): number;
  question: { encodingLength(q: Question): number };
  AUTHORITATIVE_ANSWER: number;
  TRUNCATED_RESPONSE: number;
  RECURSION_DESIRED: number;
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const dnsPacket = require('dns-packet') as DnsPacketModule;

export const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 } as const;
export type Rcode = keyof typeof RCODE;

export const FLAG_AA = dnsPacket.AUTHORITATIVE_ANSWER;
export const FLAG_TC = dnsPacket.TRUNCATED_RESPONSE;
export const FLAG_RD = dnsPacket.RECURSION_DESIRED;
const OPCODE_MASK = 0xf << 11;
const RCODE_MASK = 0xf;

/** The header's opcode number (0 = QUERY). */
export function opcodeOf(p: Packet): number {
  return (p.flags & OPCODE_MASK) >> 11;
}

export function rcodeOf(p: Packet): number {
  return p.flags & RCODE_MASK;
}

export function withRcode(p: Packet, rcode: Rcode): void {
  p.flags = (p.flags & ~RCODE_MASK) | RCODE[rcode];
}

/** Throws on a message that does not decode (the caller answers FORMERR). */
export function decode(buf: Buffer): Packet {
  const p = dnsPacket.decode(buf);
  const q = p.questions[0];
  if (q) {
    const raw = rawFirstQuestion(buf);
    if (raw.escapedName !== undefined) q.name = raw.escapedName;
    q[RAW_QUESTION] = Buffer.from(raw.bytes); // a copy: the message's buffer may be reused
  }
  return p;
}

const HEADER_BYTES = 12;

export function encode(p: Packet): Buffer {
  return compressNames(uncompressed(p));
}

/** The message as dns-packet writes it (no name compressed), with the first question's own bytes. */
function uncompressed(p: Packet): Buffer {
  const out = dnsPacket.encode(p);
  const q = p.questions[0];
  const raw = q?.[RAW_QUESTION];
  if (!q || !raw) return out;
  // dns-packet writes the questions right after the header, uncompressed: swap the first for its bytes.
  const written = dnsPacket.question.encodingLength(q);
  return Buffer.concat([out.subarray(0, HEADER_BYTES), raw, out.subarray(HEADER_BYTES + written)]);
}

/** The encoded size, names compressed: what encode() sends, so trimming (trim.ts) cuts to the bytes on the wire. */
export function encodingLength(p: Packet): number {
  return encode(p).length;
}

/**
 * Whether the encoded message takes at most `maxBytes`. Compressing never lengthens a message, so
 * one whose uncompressed size (dns-packet's cheap count) fits is not encoded to find out: most
 * answers are small, and trimming asks this several times per answer.
 */
export function fitsIn(p: Packet, maxBytes: number): boolean {
  const q = p.questions[0];
  const raw = q?.[RAW_QUESTION];
  const n = dnsPacket.encodingLength(p);
  const plain = q && raw ? n - dnsPacket.question.encodingLength(q) + raw.length : n;
  return plain <= maxBytes || encodingLength(p) <= maxBytes;
}

/** The OPT pseudo-record of a message, if it has one (EDNS0). */
export function optOf(p: Packet): OptRecord | undefined {
  return p.additionals.find((r): r is OptRecord => r.type === 'OPT');
}

/** The EDNS client subnet option of a query, if any. */
export function clientSubnetOf(p: Packet): ClientSubnetOption | undefined {
  const opt = optOf(p);
  return opt?.options?.find((o): o is ClientSubnetOption => o.code === 8 || o.code === 'CLIENT_SUBNET') as ClientSubnetOption | undefined;
}
