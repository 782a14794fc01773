// This server's network coordinates: a LAN one (among its own datacenter's servers; stored in the
// catalog's coordinates table so `near=_agent` sorts by it) and a WAN one (among all servers of
// linked datacenters; it ranks datacenters). Both move with every answered ping. The LAN one is
// written through Raft at once when the catalog has none, then at most every few seconds and only
// when it has moved noticeably, so a quiet cluster writes nothing and a busy one writes little.
import { estimatedRtt, type Command, type Coordinate, type Store } from '@registry/store';
import type { Logger } from '../runtime/logger';
import { VivaldiClient } from './vivaldi-client';
import type { WanServer } from './wan-protocol';
import { monotonicMs } from '../time';

/** Moves smaller than this (seconds of estimated RTT) are not worth a Raft write. */
const PUBLISH_THRESHOLD_S = 100e-6;
const CHECK_INTERVAL_MS = 1_000;
/** Least time between two writes of a coordinate the catalog already has (Consul batches every 5 s). */
const REPUBLISH_MIN_MS = 5_000;

export interface PeerCoordinate {
  server: WanServer;
  coord: Coordinate;
}

export class CoordinateKeeper {
  readonly lan: VivaldiClient;
  readonly wan: VivaldiClient;
  /** The latest WAN coordinate each pinged server reported (own datacenter included). */
  private readonly wanPeers = new Map<string, PeerCoordinate>();
  private timer: NodeJS.Timeout | null = null;
  private publishing = false;
  private lastPublished = -Infinity; // monotonic ms: nothing published yet

  constructor(
    private readonly self: () => WanServer,
    private readonly store: Store,
    private readonly apply: (cmd: Command) => Promise<unknown>,
    private readonly logger: Logger,
    random: () => number = Math.random,
  ) {
    this.lan = new VivaldiClient(random);
    this.wan = new VivaldiClient(random);
  }

  /** One answered ping from `peer` after `rttMs`. */
  observe(peer: WanServer, rttMs: number, lan: Coordinate, wan: Coordinate): void {
    const rttS = rttMs / 1000;
    if (peer.datacenter === this.self().datacenter) this.lan.observe(lan, rttS);
    this.wan.observe(wan, rttS);
    this.wanPeers.set(peer.id, { server: peer, coord: wan });
  }

  forget(serverId: string): void {
    this.wanPeers.delete(serverId);
  }

  /** WAN coordinates known for every server (this one included). */
  wanCoordinates(): PeerCoordinate[] {
    return [{ server: this.self(), coord: this.wan.coordinate }, ...this.wanPeers.values()];
  }

  /** Estimated RTT to a server in ms from the WAN coordinates, when both are known. */
  estimateMs(serverId: string): number | undefined {
    const peer = this.wanPeers.get(serverId);
    if (!peer) return undefined;
    const s = estimatedRtt(this.wan.coordinate, peer.coord);
    return s === undefined ? undefined : s * 1000;
  }

  start(): void {
    this.stop();
    const tick = async () => {
      await this.publish();
      if (this.timer) this.timer = setTimeout(tick, CHECK_INTERVAL_MS);
    };
    this.timer = setTimeout(tick, 0);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Write this server's LAN coordinate when the catalog lacks it or it moved enough. */
  async publish(now = monotonicMs()): Promise<void> {
    if (this.publishing) return;
    const node = this.self().node;
    if (!this.store.catalogNode(node).value) return; // the leader has not registered this server yet
    const current = this.lan.coordinate;
    const stored = this.store.coordinate(node);
    if (stored && (now - this.lastPublished < REPUBLISH_MIN_MS || moved(stored, current) < PUBLISH_THRESHOLD_S)) return;
    this.publishing = true;
    try {
      await this.apply({ type: 'coordinate.update', updates: [{ Node: node, Coord: current }] });
      this.lastPublished = now;
    } catch (err) {
      this.logger.debug({ err: (err as Error).message }, 'coordinate update failed');
    } finally {
      this.publishing = false;
    }
  }
}

/** How far a coordinate moved, in seconds of RTT it would change (Error alone is not a move). */
function moved(a: Coordinate, b: Coordinate): number {
  if (a.Vec.length !== b.Vec.length) return Number.POSITIVE_INFINITY;
  const d = Math.sqrt(a.Vec.reduce((s, x, i) => s + (x - b.Vec[i]) ** 2, 0));
  return d + Math.abs(a.Height - b.Height) + Math.abs(a.Adjustment - b.Adjustment);
}
