// The links of this server to the servers of other datacenters, through network areas (Consul's
// area serf pools, reduced to RPC): it answers and sends greetings (joins), pings every known
// server once a second (liveness, RTT, coordinates), learns the peers' server lists, and forwards
// `?dc=` reads and writes to a live server of the datacenter asked for. Every server runs its own
// links; what they learn about peer servers is written through Raft so all of them share it.
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { RpcConnectionError, RpcTimeoutError, type RaftNode, type Transport } from '@registry/raft';
import type { AreaOut, AreaServer, Command, Store } from '@registry/store';
import type { Logger } from '../runtime/logger';
import type { ServerFacts } from '../cluster/server-info';
import { effectiveWait } from '../rpc/blocking';
import { NO_PATH_TO_DC, serverError } from '../errors';
import type { QueryOptions } from '../rpc/query-options';
import { fromEnvelope, toEnvelope, type Envelope } from '../rpc/envelope';
import { RequestIds } from '../rpc/request-ids';
import type { ApplyOptions, ReadReply, Rpc } from '../rpc/rpc';
import { CoordinateKeeper } from './coordinate-keeper';
import { orderDatacenters } from './datacenter-order';
import { PeerStatus } from './peer-status';
import type { RemoteDatacenters } from '../rpc/remote-datacenters';
import {
  WAN_APPLY,
  WAN_AREA,
  WAN_HELLO,
  WAN_PING,
  WAN_READ,
  type HelloReply,
  type HelloRequest,
  type PingReply,
  type PingRequest,
  type RemoteApply,
  type RemoteAreaOp,
  type RemoteRead,
  type WanServer,
} from './wan-protocol';

const PING_INTERVAL_MS = 1_000;
const PING_TIMEOUT_MS = 800;
const HELLO_TIMEOUT_MS = 2_000;
const FORWARD_TIMEOUT_MS = 10_000;
/** Servers of the target datacenter tried for one forwarded request. */
const MAX_FORWARD_TRIES = 3;

export interface WanLinksOptions {
  self: ServerFacts;
  version: string;
  raft: RaftNode;
  store: Store;
  rpc: Rpc;
  transport: Transport;
  logger: Logger;
  /** Called before each call to a peer datacenter's server: sets how it is dialled (SecureLink). */
  secureLink?: SecureLink;
}

/**
 * Sets how `address`, a server of datacenter `datacenter`, is dialled: over TLS when the area to it
 * has UseTLS (or this datacenter dials its own servers with TLS), checking the certificate's name
 * against that datacenter's server name (tls/tls-files.ts wanDial).
 */
export type SecureLink = (address: string, datacenter: string, useTls: boolean) => void;

/** A peer server with the area it is known through. */
export interface PeerServer extends WanServer {
  areaId: string;
}

const sameDc = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

export class WanLinks implements RemoteDatacenters {
  readonly status = new PeerStatus();
  readonly coordinates: CoordinateKeeper;
  private timer: NodeJS.Timeout | null = null;
  private pinging = false;
  private areaOps: (op: RemoteAreaOp) => Promise<unknown> = async () => {
    throw serverError(NO_PATH_TO_DC);
  };

  constructor(private readonly o: WanLinksOptions) {
    this.coordinates = new CoordinateKeeper(() => this.me(), o.store, (cmd) => o.rpc.apply(cmd, { internal: true }), o.logger);
    o.transport.handle(WAN_HELLO, (body) => this.onHello(body as HelloRequest));
    o.transport.handle(WAN_PING, (body) => this.onPing(body as PingRequest | null));
    o.transport.handle(WAN_APPLY, (body) => this.onApply(body as RemoteApply));
    o.transport.handle(WAN_READ, (body) => this.onRead(body as RemoteRead));
    o.transport.handle(WAN_AREA, (body) => this.onAreaOp(body as RemoteAreaOp));
  }

  get datacenter(): string {
    return this.o.self.datacenter;
  }

  /** Who runs area join/members here when another datacenter forwards them. */
  serveAreaOps(run: (op: RemoteAreaOp) => Promise<unknown>): void {
    this.areaOps = run;
  }

  me(): WanServer {
    const s = this.o.self;
    return { id: s.id, node: s.node, address: s.address, datacenter: s.datacenter, build: this.o.version };
  }

  /** This datacenter's servers (the Raft configuration), this one first. */
  localServers(): WanServer[] {
    const config = this.o.raft.configuration();
    if (config.length === 0) return [this.me()];
    // catalogNode takes a node ID too: one lookup per server, not a copy of the whole node table.
    const nameOf = (id: string) => this.o.store.catalogNode(id).value?.Node.Node ?? id;
    const others = config
      .filter((s) => s.id !== this.o.self.id)
      .map((s) => ({ id: s.id, node: nameOf(s.id), address: s.address, datacenter: this.datacenter, build: this.o.version }));
    return [this.me(), ...others];
  }

  /** Every peer server learned through any area. */
  peerServers(): PeerServer[] {
    return this.o.store.areaServers().value.flatMap((a) => a.Servers.map((s) => ({ ...fromAreaServer(s), areaId: a.AreaID })));
  }

  /** Servers of `datacenter` to forward to: alive before failed, nearest first. */
  serversOf(datacenter: string): PeerServer[] {
    const rank = (s: PeerServer) => [this.status.state(s.id) === 'alive' ? 0 : 1, this.rttMs(s.id) ?? Number.POSITIVE_INFINITY];
    return this.peerServers()
      .filter((s) => sameDc(s.datacenter, datacenter))
      .sort((a, b) => {
        const [sa, ra] = rank(a);
        const [sb, rb] = rank(b);
        return sa !== sb ? sa - sb : ra - rb;
      });
  }

  /** Estimated RTT to a server in ms: from the WAN coordinates, else the measured pings. */
  rttMs(serverId: string): number | undefined {
    if (serverId === this.o.self.id) return 0;
    return this.coordinates.estimateMs(serverId) ?? this.status.rttMs(serverId);
  }

  /** This datacenter and every one reachable through an area, nearest first. */
  datacenters(): string[] {
    const rtts = new Map<string, number[]>();
    for (const s of this.peerServers()) {
      const list = rtts.get(s.datacenter) ?? [];
      const rtt = this.status.state(s.id) === 'alive' ? this.rttMs(s.id) : undefined;
      if (rtt !== undefined) list.push(rtt);
      rtts.set(s.datacenter, list);
    }
    return orderDatacenters(this.datacenter, rtts);
  }

  // ---- joins ----

  /** Greet the server at `address` (a join): it links back when it has an area for this datacenter. */
  async hello(address: string, area?: Pick<AreaOut, 'PeerDatacenter' | 'UseTLS'>, opts: { linkBack?: boolean } = {}): Promise<HelloReply> {
    if (area) this.o.secureLink?.(address, area.PeerDatacenter, area.UseTLS);
    const req: HelloRequest = { from: this.me(), servers: this.localServers(), ...(opts.linkBack ? { linkBack: true } : {}) };
    return (await this.o.transport.call(address, WAN_HELLO, req, HELLO_TIMEOUT_MS)) as HelloReply;
  }

  /** Record peer servers for `area` (through Raft; nothing is written when all are known as they are). */
  async learn(area: Pick<AreaOut, 'ID' | 'PeerDatacenter'>, servers: WanServer[]): Promise<void> {
    const known = new Map(this.peerServers().filter((s) => s.areaId === area.ID).map((s) => [s.id, s]));
    const fresh = servers.filter((s) => sameDc(s.datacenter, area.PeerDatacenter) && s.id !== '' && s.address !== '');
    const changed = fresh.filter((s) => {
      const k = known.get(s.id);
      return !k || k.node !== s.node || k.address !== s.address || k.build !== s.build || k.datacenter !== s.datacenter;
    });
    if (changed.length === 0) return;
    await this.o.rpc.apply({ type: 'area.servers', id: area.ID, upsert: changed.map(toAreaServer) }, { internal: true });
  }

  /** A server of another datacenter is dialled as its area says (this datacenter's own: as usual). */
  private secure(s: WanServer): void {
    if (!this.o.secureLink || sameDc(s.datacenter, this.datacenter)) return;
    this.o.secureLink(s.address, s.datacenter, this.areaFor(s.datacenter)?.UseTLS ?? false);
  }

  private areaFor(datacenter: string): AreaOut | undefined {
    return this.o.store.areaList().value.find((a) => sameDc(a.PeerDatacenter, datacenter));
  }

  private onHello(req: HelloRequest): HelloReply {
    const peer = req.from.datacenter;
    if (!sameDc(peer, this.datacenter)) {
      // Link back, without holding up the greeter's join on this datacenter's Raft writes.
      const servers = [req.from, ...(req.servers ?? [])];
      const area = this.areaFor(peer);
      const linked = area ? this.learn(area, servers) : req.linkBack ? this.linkBack(peer, servers) : undefined;
      linked?.catch((err) => this.o.logger.warn({ err: (err as Error).message, datacenter: peer }, 'could not record the servers of a joining datacenter'));
    }
    return { self: this.me(), servers: this.localServers() };
  }

  /**
   * A WAN join from a datacenter this one has no area for: make the area (as `join?wan=1` makes it
   * on the joining side) and record the greeter's servers, so both sides list and reach each other.
   * Two greeters at once make one area: the store refuses a second for the same peer.
   */
  private async linkBack(peer: string, servers: WanServer[]): Promise<void> {
    if (!this.areaFor(peer)) {
      const made = { ID: randomUUID(), PeerDatacenter: peer, RetryJoin: null, UseTLS: false };
      try {
        await this.o.rpc.apply({ type: 'area.create', area: made }, { internal: true });
        this.o.logger.info({ datacenter: peer }, 'linked back to a datacenter that WAN-joined this one');
      } catch (err) {
        if (!this.areaFor(peer)) throw err;
      }
    }
    const area = this.areaFor(peer);
    if (area) await this.learn(area, servers);
  }

  // ---- pings ----

  start(): void {
    this.stop();
    this.coordinates.start();
    const tick = async () => {
      await this.pingRound();
      if (this.timer) this.timer = setTimeout(tick, PING_INTERVAL_MS);
    };
    this.timer = setTimeout(tick, 0);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.coordinates.stop();
  }

  /** Ping every other server of this datacenter and every known peer server once. */
  async pingRound(): Promise<void> {
    if (this.pinging) return;
    this.pinging = true;
    try {
      const targets = new Map<string, WanServer>();
      for (const s of this.localServers()) if (s.id !== this.o.self.id) targets.set(s.id, s);
      for (const s of this.peerServers()) targets.set(s.id, s);
      await Promise.all([...targets.values()].map((s) => this.ping(s)));
    } finally {
      this.pinging = false;
    }
  }

  private async ping(s: WanServer): Promise<void> {
    const started = performance.now();
    let reply: PingReply;
    try {
      const req: PingRequest = { from: this.me() };
      this.secure(s);
      reply = (await this.o.transport.call(s.address, WAN_PING, req, PING_TIMEOUT_MS)) as PingReply;
    } catch {
      this.status.missed(s.id);
      return;
    }
    const rttMs = performance.now() - started;
    this.status.answered(s.id, rttMs);
    this.coordinates.observe(reply.self, rttMs, reply.lan, reply.wan);
    // The leader keeps the shared list of peer servers current as peer datacenters grow.
    if (!sameDc(reply.self.datacenter, this.datacenter) && this.o.raft.isLeader()) {
      const area = this.areaFor(reply.self.datacenter);
      if (area) await this.learn(area, reply.servers ?? []).catch(() => undefined);
    }
  }

  private onPing(req: PingRequest | null): PingReply {
    // A peer pinging us is linked to us, even if our area for it was made after its join.
    const from = req?.from;
    if (from && !sameDc(from.datacenter, this.datacenter) && !this.peerServers().some((s) => s.id === from.id)) {
      const area = this.areaFor(from.datacenter);
      if (area) this.learn(area, [from]).catch(() => undefined);
    }
    return { self: this.me(), servers: this.localServers(), lan: this.coordinates.lan.coordinate, wan: this.coordinates.wan.coordinate };
  }

  // ---- forwarding (rpc.ts sends every other-datacenter request here) ----

  private readonly requestIds = new RequestIds();

  async apply(datacenter: string, cmd: Command, options: ApplyOptions): Promise<unknown> {
    if (options.internal) throw serverError('internal commands never leave their datacenter');
    const req: RemoteApply = { datacenter, cmd, token: options.token, id: options.requestId ?? this.requestIds.next() };
    // Re-sending is safe: the request id makes the remote datacenter apply it at most once.
    return fromEnvelope(await this.forward(datacenter, WAN_APPLY, req, FORWARD_TIMEOUT_MS, true));
  }

  async read<T>(datacenter: string, endpoint: string, args: unknown, opts: QueryOptions): Promise<ReadReply<T>> {
    const req: RemoteRead = { datacenter, endpoint, args, opts: { ...opts, datacenter } };
    const timeout = (opts.minIndex > 0 ? effectiveWait(opts.waitMs) : 0) + FORWARD_TIMEOUT_MS;
    return fromEnvelope(await this.forward(datacenter, WAN_READ, req, timeout, true)) as ReadReply<T>;
  }

  /** Area join/members run by a server of `datacenter`. */
  async areaOp(op: RemoteAreaOp): Promise<unknown> {
    return fromEnvelope(await this.forward(op.datacenter, WAN_AREA, op, FORWARD_TIMEOUT_MS, op.op === 'members'));
  }

  /**
   * Send to the best live server of `datacenter`, trying the next one when the request surely did
   * not run or when running it twice is harmless (reads; writes, which carry their request id).
   * With no live server known there is no path (as in Consul, until a ping finds one again).
   */
  private async forward(datacenter: string, method: string, body: unknown, timeoutMs: number, idempotent: boolean): Promise<Envelope> {
    const servers = this.serversOf(datacenter)
      .filter((s) => this.status.state(s.id) === 'alive')
      .slice(0, MAX_FORWARD_TRIES);
    if (servers.length === 0) throw serverError(NO_PATH_TO_DC);
    let last: Error | undefined;
    for (const s of servers) {
      try {
        this.secure(s);
        return (await this.o.transport.call(s.address, method, body, timeoutMs)) as Envelope;
      } catch (err) {
        last = err as Error;
        if (err instanceof RpcConnectionError) this.status.missed(s.id);
        const retry = err instanceof RpcConnectionError || (idempotent && err instanceof RpcTimeoutError);
        if (!retry) break;
      }
    }
    throw serverError(`forwarding to datacenter ${datacenter} failed: ${last?.message ?? 'no server answered'}`);
  }

  private checkHere(datacenter: string): void {
    // One hop only: a server never forwards a forwarded request on to a third datacenter.
    if (!sameDc(datacenter, this.datacenter)) throw serverError(NO_PATH_TO_DC);
  }

  private async onApply(req: RemoteApply): Promise<Envelope> {
    try {
      this.checkHere(req.datacenter);
      return { ok: true, value: await this.o.rpc.apply(req.cmd, { token: req.token, requestId: req.id }) };
    } catch (err) {
      return toEnvelope(err);
    }
  }

  private async onRead(req: RemoteRead): Promise<Envelope> {
    try {
      this.checkHere(req.datacenter);
      return { ok: true, value: await this.o.rpc.readByName(req.endpoint, req.args, { ...req.opts, datacenter: this.datacenter }) };
    } catch (err) {
      return toEnvelope(err);
    }
  }

  private async onAreaOp(op: RemoteAreaOp): Promise<Envelope> {
    try {
      this.checkHere(op.datacenter);
      return { ok: true, value: await this.areaOps({ ...op, datacenter: this.datacenter }) };
    } catch (err) {
      return toEnvelope(err);
    }
  }
}

function toAreaServer(s: WanServer): AreaServer {
  return { ID: s.id, Node: s.node, Address: s.address, Datacenter: s.datacenter, Build: s.build };
}

function fromAreaServer(s: AreaServer): WanServer {
  return { id: s.ID, node: s.Node, address: s.Address, datacenter: s.Datacenter, build: s.Build };
}
