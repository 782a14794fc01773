// The areas table: areas by ID (one per peer datacenter) and, per area, the peer servers learned
// through it. Deleting an area forgets its servers.
import type { Txn } from '../txn';
import { AREAS, AREA_SERVERS, type AreaInput, type AreaRecord, type AreaServer } from './area-records';
import { withIndexes } from '../indexed-record';

export interface AreaTableDump {
  areas: AreaRecord[];
  servers: [string, AreaServer[]][];
}

const byId = (a: { ID: string }, b: { ID: string }) => (a.ID < b.ID ? -1 : a.ID > b.ID ? 1 : 0);

function sameServer(a: AreaServer, b: AreaServer): boolean {
  return a.ID === b.ID && a.Node === b.Node && a.Address === b.Address && a.Datacenter === b.Datacenter && a.Build === b.Build;
}

export class AreaTable {
  private readonly areas = new Map<string, AreaRecord>();
  /** folded area ID → server ID → server. */
  private readonly servers = new Map<string, Map<string, AreaServer>>();

  get(id: string): AreaRecord | undefined {
    return this.areas.get(id.toLowerCase());
  }

  all(): AreaRecord[] {
    return [...this.areas.values()].sort(byId);
  }

  /** The area whose peer is `datacenter` (datacenter names compare case-insensitively). */
  byPeer(datacenter: string): AreaRecord | undefined {
    const dc = datacenter.toLowerCase();
    return this.all().find((a) => a.PeerDatacenter.toLowerCase() === dc);
  }

  serversOf(id: string): AreaServer[] {
    return [...(this.servers.get(id.toLowerCase())?.values() ?? [])].sort(byId);
  }

  put(input: AreaInput, txn: Txn): AreaRecord {
    const key = input.ID.toLowerCase();
    const existing = this.areas.get(key);
    const rec: AreaRecord = withIndexes(input, existing?.CreateIndex ?? txn.index, txn.index);
    this.areas.set(key, rec);
    txn.bump(AREAS);
    return rec;
  }

  delete(id: string, txn: Txn): boolean {
    const key = id.toLowerCase();
    if (!this.areas.delete(key)) return false;
    txn.bump(AREAS);
    if (this.servers.delete(key)) txn.bump(AREA_SERVERS);
    return true;
  }

  /** Add or refresh `upsert` and forget `remove` (server IDs); bumps only when something differs. */
  changeServers(id: string, upsert: readonly AreaServer[], remove: readonly string[], txn: Txn): void {
    const key = id.toLowerCase();
    const servers = this.servers.get(key) ?? new Map<string, AreaServer>();
    let changed = false;
    for (const s of upsert) {
      const old = servers.get(s.ID);
      if (old && sameServer(old, s)) continue;
      servers.set(s.ID, { ...s });
      changed = true;
    }
    for (const sid of remove) changed = servers.delete(sid) || changed;
    if (servers.size > 0) this.servers.set(key, servers);
    else this.servers.delete(key);
    if (changed) txn.bump(AREA_SERVERS);
  }

  dump(): AreaTableDump {
    return { areas: this.all(), servers: [...this.servers.entries()].map(([k, m]) => [k, [...m.values()].sort(byId)]) };
  }

  static load(dump: AreaTableDump | undefined): AreaTable {
    const t = new AreaTable();
    for (const a of dump?.areas ?? []) t.areas.set(a.ID.toLowerCase(), a);
    for (const [k, list] of dump?.servers ?? []) t.servers.set(k, new Map(list.map((s) => [s.ID, s])));
    return t;
  }

  invariants(): string[] {
    const problems: string[] = [];
    const peers = new Set<string>();
    for (const a of this.areas.values()) {
      const dc = a.PeerDatacenter.toLowerCase();
      if (peers.has(dc)) problems.push(`two areas for peer datacenter ${a.PeerDatacenter}`);
      peers.add(dc);
    }
    for (const [k, m] of this.servers) {
      const area = this.areas.get(k);
      if (!area) problems.push(`servers kept for unknown area ${k}`);
      for (const s of m.values()) {
        if (area && s.Datacenter.toLowerCase() !== area.PeerDatacenter.toLowerCase()) problems.push(`server ${s.ID} of area ${k} is in ${s.Datacenter}`);
      }
    }
    return problems;
  }
}
