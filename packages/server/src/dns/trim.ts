// Cutting a response to what its transport carries (Consul's trimUDPResponse/trimTCPResponse).
// UDP: a client without EDNS gets at most `udp_answer_limit` answers and 512 bytes; with EDNS, the
// size it advertised (never below 512). TCP: 64 KiB. Answers are dropped from the end (they are
// already in random order) and additional records whose name no kept answer points at go with them.
//
// TC: a response cut to fit the size limit says so (TC set), so a resolver retries over TCP and
// gets everything; a response cut only by udp_answer_limit sets TC only with enable_truncate
// (Consul's default: a few random instances over UDP, no retry). docs/dns.md "Truncation".
// Sizes are the compressed ones, the bytes sent (codec.ts fitsIn, name-compression.ts).
import { fitsIn, optOf, type DataRecord, type Packet, type SrvData } from './codec';

export const DEFAULT_UDP_SIZE = 512;
const TCP_MAX_SIZE = 65_523; // 64 KiB less the TCP length prefix and some headroom, as Consul
const TCP_MAX_ANSWERS = 4096;
const TCP_MAX_SRV_ANSWERS = 1024;

export interface TrimResult {
  /** Answers were dropped because the response would not fit the size limit. */
  bySize: boolean;
  /** Answers were dropped by udp_answer_limit. */
  byLimit: boolean;
}

/** The largest response a UDP client takes: 512, or its EDNS payload size when larger. */
export function udpSizeOf(request: Packet): number {
  return Math.max(DEFAULT_UDP_SIZE, optOf(request)?.udpPayloadSize || 0);
}

/** Keep only the additional address records some kept answer still points at (Consul's syncExtra). */
function syncAdditionals(resp: Packet, extras: DataRecord[]): void {
  const targets = new Set<string>();
  for (const a of resp.answers) {
    if (a.type === 'SRV') targets.add((a.data as SrvData).target.toLowerCase());
    else if (a.type === 'CNAME') targets.add(String(a.data).toLowerCase());
  }
  const owned = new Set<unknown>(extras);
  const others = resp.additionals.filter((r) => !owned.has(r));
  resp.additionals = [...extras.filter((r) => targets.has(r.name.toLowerCase())), ...others];
}

/** Drop answers from the end until the response's size is at most `maxSize` (binary search), keeping at least one. */
function fitSize(resp: Packet, maxSize: number, extras: DataRecord[], reserve: number): boolean {
  if (resp.answers.length <= 1 || fitsIn(resp, maxSize - reserve)) return false;
  const all = resp.answers;
  const fits = (count: number) => {
    resp.answers = all.slice(0, count);
    syncAdditionals(resp, extras);
    return fitsIn(resp, maxSize - reserve);
  };
  let lo = 1;
  let hi = all.length - 1;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  fits(lo);
  return true;
}

/**
 * Cut `resp` for UDP. `reserve`: bytes the caller will still add (the OPT record). `extras`: the
 * additional records that belong to answers (SRV targets' addresses), the ones trimming may drop.
 */
export function trimUdp(request: Packet, resp: Packet, udpAnswerLimit: number, extras: DataRecord[], reserve = 0): TrimResult {
  const maxSize = udpSizeOf(request);
  let byLimit = false;
  if (maxSize === DEFAULT_UDP_SIZE && resp.answers.length > udpAnswerLimit) {
    resp.answers = resp.answers.slice(0, udpAnswerLimit);
    syncAdditionals(resp, extras);
    byLimit = true;
  }
  const bySize = fitSize(resp, maxSize, extras, reserve);
  return { bySize, byLimit };
}

/** Cut `resp` for TCP: at most 4096 answers (1024 SRV) and 64 KiB. */
export function trimTcp(resp: Packet, extras: DataRecord[], srv: boolean, reserve = 0): TrimResult {
  const max = srv ? TCP_MAX_SRV_ANSWERS : TCP_MAX_ANSWERS;
  let byLimit = false;
  if (resp.answers.length > max) {
    resp.answers = resp.answers.slice(0, max);
    syncAdditionals(resp, extras);
    byLimit = true;
  }
  const bySize = fitSize(resp, TCP_MAX_SIZE, extras, reserve);
  return { bySize, byLimit };
}
