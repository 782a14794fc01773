// `registry rtt [-wan] node1 [node2]` (Consul's command/rtt): the round-trip time the network
// coordinates predict between two nodes — LAN coordinates from /v1/coordinate/nodes, or with -wan
// the servers' WAN coordinates from /v1/coordinate/datacenters (names as <node>.<datacenter>). The
// second node defaults to the agent's own.
import { Command } from 'commander';
import { CliError } from '../cli-error';
import { Client } from '../http-client';
import { withClientFlags } from '../http-flags';
import { out } from '../output';
import { coordinateDistanceSeconds, intersectSegments, type Coordinate } from '../rtt/coordinate-distance';

interface NodeCoordinate {
  Node: string;
  Segment?: string;
  Coord: Coordinate;
}

interface DatacenterCoordinates {
  Datacenter: string;
  AreaID: string;
  Coordinates: NodeCoordinate[] | null;
}

interface Self {
  Config: { NodeName: string; Datacenter: string };
}

export function rttCommand(): Command {
  const c = withClientFlags(new Command('rtt').description('estimate the network round-trip time between nodes'))
    .argument('[nodes...]', 'node1 [node2] (node2 defaults to the agent\'s node; <node>.<datacenter> with -wan)')
    .option('--wan', 'use WAN coordinates instead of LAN coordinates');
  return c.action(async (nodes: string[]) => {
    const o = c.opts();
    if (nodes.length < 1 || nodes.length > 2) throw new CliError(`One or two node names must be specified\n\n${c.helpInformation().trimEnd()}`);
    const client = new Client(o);
    const self = async () => {
      try {
        return await client.get<Self>('/v1/agent/self', { local: true });
      } catch (e) {
        throw new CliError(`Unable to look up agent info: ${(e as Error).message}`);
      }
    };
    const coordinates = async <T>(path: string): Promise<T> => {
      try {
        return await client.get<T>(path);
      } catch (e) {
        throw new CliError(`Error getting coordinates: ${(e as Error).message}`);
      }
    };
    let pair: [Coordinate | undefined, Coordinate | undefined];
    let source: string;
    if (o.wan) {
      source = 'WAN';
      if (nodes.length < 2) {
        const { Config } = await self();
        nodes.push(`${Config.NodeName}.${Config.Datacenter}`);
      }
      const parts = nodes.map((n) => n.split('.'));
      if (parts.some((p) => p.length !== 2)) throw new CliError('Node names must be specified as <node name>.<datacenter> with -wan');
      const [[node1, dc1], [node2, dc2]] = parts as [[string, string], [string, string]];
      const dcs = (await coordinates<DatacenterCoordinates[] | null>('/v1/coordinate/datacenters')) ?? [];
      pair = wanPair(dcs, node1, dc1, node2, dc2);
    } else {
      source = 'LAN';
      if (nodes.length < 2) nodes.push((await self()).Config.NodeName);
      const entries = (await coordinates<NodeCoordinate[] | null>('/v1/coordinate/nodes')) ?? [];
      // Each node's coordinates by network segment, as Consul's lib.CoordinateSet.
      const sets = nodes.map((name) => new Map(entries.filter((e) => e.Node === name).map((e) => [e.Segment ?? '', e.Coord])));
      pair = intersectSegments(sets[0]!, sets[1]!);
    }
    const [a, b] = pair;
    if (!a) throw new CliError(`Could not find a coordinate for node ${JSON.stringify(nodes[0])}`);
    if (!b) throw new CliError(`Could not find a coordinate for node ${JSON.stringify(nodes[1])}`);
    const ms = (coordinateDistanceSeconds(a, b) * 1000).toFixed(3);
    out(`Estimated ${nodes[0]} <-> ${nodes[1]} rtt: ${ms} ms (using ${source} coordinates)`);
  });
}

/** Both nodes' WAN coordinates, only when found in the same area (Consul never compares across areas). */
function wanPair(dcs: DatacenterCoordinates[], node1: string, dc1: string, node2: string, dc2: string): [Coordinate | undefined, Coordinate | undefined] {
  let area1: string | undefined;
  let area2: string | undefined;
  let coord1: Coordinate | undefined;
  let coord2: Coordinate | undefined;
  // Consul lists a server by its node name; registry's agents list it by its WAN member name,
  // <node>.<datacenter>. Either names the node asked for.
  const named = (entry: NodeCoordinate, node: string, dc: string) => entry.Node === node || entry.Node === `${node}.${dc}`;
  for (const dc of dcs) {
    for (const entry of dc.Coordinates ?? []) {
      if (dc.Datacenter === dc1 && named(entry, node1, dc1)) [area1, coord1] = [dc.AreaID, entry.Coord];
      if (dc.Datacenter === dc2 && named(entry, node2, dc2)) [area2, coord2] = [dc.AreaID, entry.Coord];
      if (area1 === area2 && coord1 && coord2) return [coord1, coord2];
    }
  }
  return [undefined, undefined];
}
