// One DNS question in, one response out (Consul's dns.go handleQuery and dispatch): which lookup
// the name asks for, the records it answers with, NXDOMAIN with the SOA, EDNS (client subnet
// echoed) and the cut to the transport's size. Recursor-free: names outside the domain are REFUSED.
import { isIP } from 'node:net';
import type { CheckServiceNodeOut } from '@registry/store';
import { NO_PATH_TO_DC, RegistryError } from '../errors';
import {
  FLAG_AA,
  FLAG_RD,
  FLAG_TC,
  clientSubnetOf,
  fitsIn,
  opcodeOf,
  optOf,
  rcodeOf,
  withRcode,
  type ClientSubnetOption,
  type DataRecord,
  type OptRecord,
  type Packet,
  type Rcode,
} from './codec';
import type { DnsConfig } from './config';
import { serviceTtlS } from './config';
import {
  addressRecords,
  healthy,
  nodeAnswers,
  serviceAddressAnswers,
  serviceSrvAnswers,
  soaRecord,
  type AnswerContext,
} from './answers';
import { shuffle } from '../queries/execute';
import type { Lookups } from './lookups';
import { parseLabels, placeName, type Lookup } from './names';
import { trimTcp, trimUdp, udpSizeOf } from './trim';

export type Network = 'udp' | 'tcp';

export interface DnsLogger {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

const OPCODE_AND_RD = (0xf << 11) | FLAG_RD;

/** An answer still being built: records, rcode, and the additionals trimming may drop with their answers. */
interface Draft {
  resp: Packet;
  extras: DataRecord[];
  /** A service or prepared-query answer: cut to the transport (node answers are small and are not). */
  trim: boolean;
  /** The answer depends on who asked (prepared queries: `_ip`), so a client subnet echo keeps its scope. */
  scoped: boolean;
}

export class DnsHandler {
  private readonly ctx: AnswerContext;

  constructor(
    private readonly lookups: Lookups,
    private cfg: DnsConfig,
    localDc: string,
    translateWanAddrs: boolean,
    private readonly logger: DnsLogger,
  ) {
    this.ctx = { domain: cfg.domain, localDc, translateWanAddrs };
  }

  /** A reload's `dns_config` (agent/reload.ts; the domain is kept: it needs a restart). */
  reload(cfg: DnsConfig): void {
    this.cfg = cfg;
    this.lookups.reload(cfg);
  }

  /** The response to `req`, received over `network` from `remoteIp`. Never throws. */
  async respond(req: Packet, network: Network, remoteIp: string): Promise<Packet> {
    const resp: Packet = {
      id: req.id,
      type: 'response',
      flags: (req.flags & OPCODE_AND_RD) | FLAG_AA,
      questions: req.questions.slice(0, 1),
      answers: [],
      authorities: [],
      additionals: [],
    };
    const draft: Draft = { resp, extras: [], trim: false, scoped: false };
    try {
      await this.dispatch(req, draft, remoteIp);
    } catch (err) {
      this.failed(draft, err);
    }
    this.finish(req, draft, network);
    return resp;
  }

  private async dispatch(req: Packet, d: Draft, remoteIp: string): Promise<void> {
    const { resp } = d;
    if (opcodeOf(req) !== 0) return this.refuse(d, 'NOTIMP');
    const q = req.questions[0];
    if (!q) return this.refuse(d, 'FORMERR');
    const place = placeName(q.name, this.cfg.domain);
    if (place.at === 'outside') return this.refuse(d, 'REFUSED');
    switch (q.type) {
      case 'SOA':
        resp.answers.push(soaRecord(this.cfg));
        return;
      case 'NS':
        // The zone's one name server is the SOA's `ns.<domain>` (no glue: it names no node).
        resp.answers.push({ type: 'NS', name: this.cfg.domain, ttl: this.cfg.soa.minTtl, class: 'IN', data: `ns.${this.cfg.domain}` });
        return;
      case 'AXFR':
      case 'IXFR':
        return this.refuse(d, 'NOTIMP');
    }
    if (place.at === 'apex') return; // the zone exists; no records of that type (NOERROR, SOA)
    const lookup = parseLabels(place.labels, q.type === 'SRV');
    await this.lookup(lookup, req, d, remoteIp);
  }

  private async lookup(l: Lookup, req: Packet, d: Draft, remoteIp: string): Promise<void> {
    const { resp } = d;
    const q = req.questions[0];
    if (l.kind === 'invalid') return this.nxdomain(d);
    const dc = this.datacenterOf(l.datacenter);
    switch (l.kind) {
      case 'service': {
        // Consul shuffles every service answer.
        const nodes = shuffle(healthy(await this.lookups.serviceNodes(l.service, l.tag, dc), this.cfg.onlyPassing));
        if (nodes.length === 0) return this.nxdomain(d);
        this.serviceRecords(q.name, q.type, nodes, serviceTtlS(this.cfg, l.service), dc, d);
        return;
      }
      case 'query': {
        const subnet = clientSubnetOf(req);
        const source = subnet?.ip && isIP(subnet.ip) ? subnet.ip : remoteIp;
        d.scoped = true;
        const r = await this.lookups.preparedQuery(l.query, dc, source);
        if (r.nodes.length === 0) return this.nxdomain(d);
        // Execution already ordered them (shuffled, or by distance for Near).
        this.serviceRecords(q.name, q.type, r.nodes, r.ttlS, r.datacenter, d);
        return;
      }
      case 'node': {
        const found = await this.lookups.node(l.node, dc);
        if (!found) return this.nxdomain(d);
        if (['ANY', 'A', 'AAAA', 'TXT', 'CNAME'].includes(q.type)) resp.answers.push(...nodeAnswers(q.name, q.type, found.Node, this.cfg.nodeTtlS, this.ctx));
        return;
      }
      case 'addr':
        resp.answers.push(...addressRecords(q.name, l.ip, q.type === 'ANY' ? 'ANY' : q.type, this.cfg.nodeTtlS).filter((r) => r.type !== 'CNAME'));
        return;
    }
  }

  private serviceRecords(qname: string, qtype: string, nodes: readonly CheckServiceNodeOut[], ttl: number, dc: string, d: Draft): void {
    d.trim = true;
    if (qtype === 'SRV') {
      const { answers, additionals } = serviceSrvAnswers(qname, nodes, ttl, dc, this.ctx);
      d.resp.answers.push(...answers);
      d.resp.additionals.push(...additionals);
      d.extras = additionals;
    } else {
      d.resp.answers.push(...serviceAddressAnswers(qname, qtype, nodes, ttl, this.ctx));
    }
  }

  /** The datacenter a name's `<dc>` label asks for (this one when absent; this one's own spelling when it names it). */
  private datacenterOf(label: string | undefined): string {
    if (label === undefined || label === this.ctx.localDc.toLowerCase()) return this.ctx.localDc;
    return label;
  }

  private nxdomain(d: Draft): void {
    withRcode(d.resp, 'NXDOMAIN');
  }

  private refuse(d: Draft, rcode: Rcode): void {
    withRcode(d.resp, rcode);
    d.resp.flags &= ~FLAG_AA;
  }

  /** A failed read: an unknown prepared query or datacenter is a name that does not exist; anything else SERVFAIL. */
  private failed(d: Draft, err: unknown): void {
    d.resp.answers = [];
    d.resp.additionals = [];
    d.extras = [];
    d.trim = false;
    if (err instanceof RegistryError && (err.kind === 'NotFound' || err.message === NO_PATH_TO_DC)) return this.nxdomain(d);
    this.logger.error({ err: (err as Error).message }, 'dns: lookup failed');
    withRcode(d.resp, 'SERVFAIL');
  }

  /** Cut to the transport, add EDNS, and the SOA to an empty or NXDOMAIN answer. */
  private finish(req: Packet, d: Draft, network: Network): void {
    const { resp } = d;
    const rcode = rcodeOf(resp);
    const opt = this.optFor(req, rcode, d.scoped);
    if (opt) resp.additionals.push(opt);
    if (d.trim) {
      if (network === 'udp') {
        const cut = trimUdp(req, resp, this.cfg.udpAnswerLimit, d.extras);
        if (cut.bySize || (cut.byLimit && this.cfg.enableTruncate)) resp.flags |= FLAG_TC;
      } else {
        trimTcp(resp, d.extras, req.questions[0]?.type === 'SRV');
      }
    }
    const noRecords = rcode === 0 && resp.answers.length === 0 && (resp.flags & FLAG_TC) === 0;
    if ((rcode === 3 || noRecords) && (resp.flags & FLAG_AA) !== 0) resp.authorities.push(soaRecord(this.cfg));
    // Whatever else would not fit a UDP datagram: an empty, truncated answer (the client retries over TCP).
    if (network === 'udp' && !fitsIn(resp, udpSizeOf(req))) {
      resp.answers = [];
      resp.authorities = [];
      resp.additionals = opt ? [opt] : [];
      resp.flags |= FLAG_TC;
    }
  }

  /** The response's OPT record when the query had one: the client's size, and its subnet echoed (RFC 7871). */
  private optFor(req: Packet, rcode: number, scoped: boolean): OptRecord | undefined {
    const opt = optOf(req);
    if (!opt) return undefined;
    const out: OptRecord = { type: 'OPT', name: '.', udpPayloadSize: Math.max(512, opt.udpPayloadSize || 0), options: [] };
    const subnet = clientSubnetOf(req);
    if (subnet && subnet.ip) {
      const echo: ClientSubnetOption = {
        code: 'CLIENT_SUBNET',
        family: subnet.family,
        sourcePrefixLength: subnet.sourcePrefixLength,
        // Valid for the client's subnet only when the answer depended on it; else for everyone.
        scopePrefixLength: scoped && rcode === 0 ? subnet.sourcePrefixLength : 0,
        ip: subnet.ip,
      };
      out.options.push(echo);
    }
    return out;
  }
}
