// Name compression (RFC 1035 §4.1.4) of a message dns-packet wrote uncompressed: Consul's answers
// are compressed (miekg/dns with Compress = true), so the same records took ~1.7× the bytes here
// and a large SRV set reached the 512-byte UDP limit sooner (issue #30).
//
// What is compressed is what miekg/dns compresses: question and owner names, and the names inside
// NS, CNAME, PTR, MX and SOA RDATA. An SRV target is never written as a pointer (RFC 2782: "name
// compression is not to be used for this field") but, as in miekg/dns, later names may point into
// it. Names are matched by their exact bytes (case included, as miekg/dns keys its table by the
// name as written), so a pointer always decodes to the very labels it replaces. Any other RDATA is
// copied unchanged (RFC 3597 §4: no compression inside types a resolver may not know).
//
// Everything else stays dns-packet's: this walks the bytes it wrote, copying each section and
// replacing the tail of a name by a pointer to an earlier occurrence, and rewrites RDLENGTH of a
// record whose RDATA shrank.

const HEADER_BYTES = 12;
/** A pointer holds 14 bits of offset: names written past this cannot be pointed at. */
const MAX_POINTER_OFFSET = 0x3fff;

const TYPE_NS = 2;
const TYPE_CNAME = 5;
const TYPE_SOA = 6;
const TYPE_PTR = 12;
const TYPE_MX = 15;
const TYPE_SRV = 33;
/** SOA RDATA after its two names: serial, refresh, retry, expire, minimum. */
const SOA_TIMERS_BYTES = 20;

class Writer {
  /** Every name suffix written so far (its bytes, latin1) → where it starts in `out`. */
  private readonly seen = new Map<string, number>();
  off = 0;

  constructor(
    private readonly src: Buffer,
    readonly out: Buffer,
  ) {}

  copy(start: number, end: number): void {
    this.src.copy(this.out, this.off, start, end);
    this.off += end - start;
  }

  /**
   * Copy the uncompressed name at `at` in the source, replacing its longest suffix already written
   * by a pointer when `compress`; every suffix written becomes a pointer target. Returns where the
   * name ends in the source.
   */
  name(at: number, compress: boolean): number {
    const src = this.src;
    const starts: number[] = [];
    let p = at;
    for (let len = src[p]; len !== 0; len = src[p]) {
      if (len === undefined || (len & 0xc0) !== 0) throw new Error('name-compression: not an uncompressed name');
      starts.push(p);
      p += 1 + len;
    }
    const end = p + 1;
    for (const start of starts) {
      const key = src.toString('latin1', start, end);
      const earlier = this.seen.get(key);
      if (earlier !== undefined && compress) {
        this.out.writeUInt16BE(0xc000 | earlier, this.off);
        this.off += 2;
        return end;
      }
      if (earlier === undefined && this.off <= MAX_POINTER_OFFSET) this.seen.set(key, this.off);
      this.copy(start, start + 1 + src[start]);
    }
    this.out[this.off++] = 0;
    return end;
  }
}

/** RDATA of `type` from src[start, end) written through `w`, names compressed as miekg/dns does. */
function rdata(w: Writer, src: Buffer, type: number, start: number, end: number): void {
  switch (type) {
    case TYPE_NS:
    case TYPE_CNAME:
    case TYPE_PTR:
      w.name(start, true);
      return;
    case TYPE_MX:
      w.copy(start, start + 2);
      w.name(start + 2, true);
      return;
    case TYPE_SOA: {
      const afterMname = w.name(start, true);
      const afterRname = w.name(afterMname, true);
      w.copy(afterRname, afterRname + SOA_TIMERS_BYTES);
      return;
    }
    case TYPE_SRV:
      w.copy(start, start + 6);
      w.name(start + 6, false);
      return;
    default:
      w.copy(start, end);
  }
}

/** `msg` (a whole message with no compressed name, as dns-packet writes one) with its names compressed. */
export function compressNames(msg: Buffer): Buffer {
  const w = new Writer(msg, Buffer.allocUnsafe(msg.length));
  w.copy(0, HEADER_BYTES);
  const questions = msg.readUInt16BE(4);
  const records = msg.readUInt16BE(6) + msg.readUInt16BE(8) + msg.readUInt16BE(10);
  let p = HEADER_BYTES;
  for (let i = 0; i < questions; i++) {
    p = w.name(p, true);
    w.copy(p, p + 4); // type, class
    p += 4;
  }
  for (let i = 0; i < records; i++) {
    p = w.name(p, true);
    const type = msg.readUInt16BE(p);
    const rdLength = msg.readUInt16BE(p + 8);
    w.copy(p, p + 8); // type, class, TTL
    const lengthAt = w.off;
    w.off += 2;
    const start = p + 10;
    const end = start + rdLength;
    rdata(w, msg, type, start, end);
    w.out.writeUInt16BE(w.off - lengthAt - 2, lengthAt);
    p = end;
  }
  if (p !== msg.length) throw new Error('name-compression: trailing bytes after the last record');
  return w.out.subarray(0, w.off);
}
