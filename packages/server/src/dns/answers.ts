// Resource records from catalog answers (Consul's dns.go formatNodeRecord, serviceNodeRecords,
// serviceSRVRecords, soa): pure functions of what the reads returned, so they are tested without
// a server. Which instances are asked for and how the response is cut to size live elsewhere
// (lookups.ts, trim.ts).
import { isIP, isIPv4 } from 'node:net';
import type { CheckServiceNodeOut, NodeOut } from '@registry/store';
import type { DataRecord, RecordType } from './codec';
import type { DnsConfig } from './config';
import { hexOfIp } from './names';

export interface AnswerContext {
  domain: string;
  /** This agent's datacenter. */
  localDc: string;
  /** `translate_wan_addrs`: nodes of other datacenters answer with their WAN address. */
  translateWanAddrs: boolean;
}

/** Instances whose checks pass (Consul's CheckServiceNodes.Filter): critical never; warning unless onlyPassing. */
export function healthy(nodes: readonly CheckServiceNodeOut[], onlyPassing: boolean): CheckServiceNodeOut[] {
  return nodes.filter((n) => n.Checks.every((c) => c.Status !== 'critical' && (!onlyPassing || c.Status === 'passing')));
}

/** A node's address as this agent answers it: the WAN one for another datacenter's node under translate_wan_addrs. */
export function nodeAddress(node: NodeOut, ctx: AnswerContext): string {
  const wan = node.TaggedAddresses?.wan;
  if (ctx.translateWanAddrs && node.Datacenter && node.Datacenter !== ctx.localDc && wan) return wan;
  return node.Address;
}

/** Where an instance is reached: the service's own address, else its node's. */
export function instanceAddress(n: CheckServiceNodeOut, ctx: AnswerContext): string {
  return n.Service.Address || nodeAddress(n.Node, ctx);
}

const fqdn = (name: string) => name.replace(/\.$/, '');

/**
 * The records naming `addr` for a question of type `qtype` (Consul's formatNodeRecord): A for
 * IPv4, AAAA for IPv6, a CNAME for a host name; nothing when the type does not fit the address.
 */
export function addressRecords(name: string, addr: string, qtype: RecordType, ttl: number): DataRecord[] {
  const family = isIP(addr);
  const any = qtype === 'ANY';
  if (family === 4 && (any || qtype === 'A')) return [{ type: 'A', name, ttl, class: 'IN', data: addr }];
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(addr);
    if (mapped && (any || qtype === 'A')) return [{ type: 'A', name, ttl, class: 'IN', data: mapped[1] }];
    if (!mapped && (any || qtype === 'AAAA')) return [{ type: 'AAAA', name, ttl, class: 'IN', data: addr }];
    return [];
  }
  if (family === 0 && addr !== '' && ['ANY', 'A', 'AAAA', 'CNAME', 'TXT'].includes(qtype)) {
    return [{ type: 'CNAME', name, ttl, class: 'IN', data: fqdn(addr) }];
  }
  return [];
}

/**
 * A/AAAA (or CNAME) answers for service instances (Consul's serviceNodeRecords): one per distinct
 * address, in the instances' order. A CNAME is answered only when no instance has an IP address.
 */
export function serviceAddressAnswers(qname: string, qtype: RecordType, nodes: readonly CheckServiceNodeOut[], ttl: number, ctx: AnswerContext): DataRecord[] {
  const seen = new Set<string>();
  const answers: DataRecord[] = [];
  let cname: DataRecord[] | undefined;
  for (const n of nodes) {
    let addr = instanceAddress(n, ctx);
    // A service address naming the very name asked for would loop: use the node's.
    if (fqdn(addr).toLowerCase() === fqdn(qname).toLowerCase()) addr = nodeAddress(n.Node, ctx);
    if (seen.has(addr)) continue;
    seen.add(addr);
    const records = addressRecords(qname, addr, qtype, ttl);
    if (records.length === 0) continue;
    if (records[0].type === 'CNAME') cname ??= records;
    else answers.push(...records);
  }
  return answers.length === 0 && cname ? cname : answers;
}

/** The SRV weight of an instance: its Weights.Warning when a check warns, else Weights.Passing (Consul's findWeight). */
export function weightOf(n: CheckServiceNodeOut): number {
  const w = n.Service.Weights ?? { Passing: 1, Warning: 1 };
  const statuses = n.Checks.filter((c) => c.ServiceName === '' || c.ServiceName === n.Service.Service).map((c) => c.Status);
  if (statuses.includes('critical')) return 0;
  if (statuses.includes('warning')) return w.Warning;
  return w.Passing;
}

/**
 * SRV answers and, in the additional section, the address of each target (Consul's
 * serviceSRVRecords). The target is `<node>.node.<dc>.<domain>` when the instance uses its node's
 * address; a service address of its own gets `<hex ip>.addr.<dc>.<domain>` (one name, one
 * address), and a host name is the target itself.
 */
export function serviceSrvAnswers(
  qname: string,
  nodes: readonly CheckServiceNodeOut[],
  ttl: number,
  dc: string,
  ctx: AnswerContext,
): { answers: DataRecord[]; additionals: DataRecord[] } {
  const seen = new Set<string>();
  const answers: DataRecord[] = [];
  const additionals: DataRecord[] = [];
  const extraNames = new Set<string>();
  for (const n of nodes) {
    const tuple = `${n.Node.Node}:${n.Service.Address}:${n.Service.Port}`;
    if (seen.has(tuple)) continue;
    seen.add(tuple);
    const nodeAddr = nodeAddress(n.Node, ctx);
    const addr = n.Service.Address || nodeAddr;
    let target = `${n.Node.Node}.node.${dc}.${ctx.domain}`;
    let extra = addressRecords(target, addr, 'ANY', ttl);
    if (addr !== nodeAddr) {
      if (isIP(addr)) {
        target = `${hexOfIp(extra[0]?.type === 'A' && !isIPv4(addr) ? String(extra[0].data) : addr)}.addr.${dc}.${ctx.domain}`;
        extra = extra.map((r) => ({ ...r, name: target }));
      } else {
        target = fqdn(addr);
        extra = [];
      }
    }
    answers.push({ type: 'SRV', name: qname, ttl, class: 'IN', data: { priority: 1, weight: weightOf(n), port: n.Service.Port, target } });
    for (const r of extra) {
      // One address record per target name, however many ports point at it.
      const key = `${r.name.toLowerCase()} ${r.type}`;
      if (extraNames.has(key)) continue;
      extraNames.add(key);
      additionals.push(r);
    }
  }
  return { answers, additionals };
}

/** A node's answer (Consul's nodeLookup): its address records; for TXT and ANY its meta as `key=value` TXT records too. */
export function nodeAnswers(qname: string, qtype: RecordType, node: NodeOut, ttl: number, ctx: AnswerContext): DataRecord[] {
  const records = qtype === 'TXT' ? [] : addressRecords(qname, nodeAddress(node, ctx), qtype, ttl);
  if (qtype === 'TXT' || qtype === 'ANY') {
    for (const [k, v] of Object.entries(node.Meta ?? {})) records.push({ type: 'TXT', name: qname, ttl, class: 'IN', data: `${k}=${v}` });
  }
  return records;
}

/** The zone's SOA (Consul's soa()): `ns.<domain>`, `hostmaster.<domain>`, serial = now in seconds. */
export function soaRecord(cfg: DnsConfig, now: number = Date.now()): DataRecord {
  return {
    type: 'SOA',
    name: cfg.domain,
    ttl: cfg.soa.minTtl,
    class: 'IN',
    data: {
      mname: `ns.${cfg.domain}`,
      rname: `hostmaster.${cfg.domain}`,
      serial: Math.floor(now / 1000) >>> 0,
      refresh: cfg.soa.refresh,
      retry: cfg.soa.retry,
      expire: cfg.soa.expire,
      minimum: cfg.soa.minTtl,
    },
  };
}
