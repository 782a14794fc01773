// How one agent's file descriptors are shared (issue 33): the listeners' default caps are shares of
// the soft RLIMIT_NOFILE, chosen so that together they leave a reserve for what must never fail for
// want of one — LevelDB's tables, the Raft log's files, the links this server dials to its peers,
// logs and outgoing checks. Without it a flood on any port could take the descriptors storage
// needs, and a server that cannot write its log leaves Raft (21,000 idle connections did that).
//
//   reserve      a quarter of the limit, between 256 and 4096 (past 4096 storage never needs more)
//   rpc          the server port: an eighth of the limit, between 32 and 8192
//   dns          the DNS TCP port: an eighth of the limit, between 16 and 4096
//   http         the rest, less the 256 sockets that may be open at once while being refused
//                (HTTP and HTTPS share it: one limiter counts both ports' connections)
//
// With a limit of 1024: reserve 256, rpc 128, dns 128, http 256. With 65,536: 4096, 8192, 4096,
// 48,896. A configured cap replaces its share (limits.http_max_conns, limits.rpc_max_conns,
// limits.dns_max_conns) and is the operator's to fit. Every listener's default is its share from
// this one function; a listener added later takes its share from http's, here, so the reserve stays
// whole and the shares never add up to more than the limit.
import { readFileSync } from 'node:fs';

const RESERVE_MIN = 256;
const RESERVE_MAX = 4096;
const RPC_MIN = 32;
const RPC_MAX = 8192;
const DNS_MIN = 16;
const DNS_MAX = 4096;
/** Past this many HTTP connections memory, not descriptors, is what runs out. */
const HTTP_MAX = 65_536;
/** Sockets the HTTP port may hold open at once while refusing them (http/connection-limit.ts). */
export const HTTP_REFUSAL_SLOTS = 256;
/** Used when the limit cannot be read (not Linux). */
export const FALLBACK_NOFILE = 1024;

export interface DescriptorShares {
  nofile: number;
  reserve: number;
  rpc: number;
  /** The DNS TCP port (limits.dns_max_conns). */
  dns: number;
  http: number;
}

/** The soft RLIMIT_NOFILE of this process (Node cannot call getrlimit, Linux shows it in /proc). */
export function softFileLimit(procLimits = '/proc/self/limits'): number | undefined {
  let text: string;
  try {
    text = readFileSync(procLimits, 'utf8');
  } catch {
    return undefined;
  }
  const m = /^Max open files\s+(\S+)\s+(\S+)/m.exec(text);
  if (!m) return undefined;
  if (m[1] === 'unlimited') return Number.MAX_SAFE_INTEGER;
  const n = Number(m[1]);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

export function descriptorShares(nofile: number = softFileLimit() ?? FALLBACK_NOFILE): DescriptorShares {
  const reserve = Math.min(RESERVE_MAX, Math.max(RESERVE_MIN, Math.floor(nofile / 4)));
  const rpc = Math.min(RPC_MAX, Math.max(RPC_MIN, Math.floor(nofile / 8)));
  const dns = Math.min(DNS_MAX, Math.max(DNS_MIN, Math.floor(nofile / 8)));
  const http = Math.max(16, Math.min(HTTP_MAX, nofile - reserve - rpc - dns - HTTP_REFUSAL_SLOTS));
  return { nofile, reserve, rpc, dns, http };
}
