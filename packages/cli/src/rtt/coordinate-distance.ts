// The Vivaldi distance between two network coordinates, as serf's coordinate.DistanceTo computes it
// (and so Consul's `rtt`): the Euclidean distance of the vectors plus both heights, plus both
// adjustments unless that would make it zero or negative; seconds, cut to whole nanoseconds as
// Go's time.Duration holds them.

export interface Coordinate {
  Vec: number[];
  Error?: number;
  Adjustment: number;
  Height: number;
}

export function coordinateDistanceSeconds(a: Coordinate, b: Coordinate): number {
  if (a.Vec.length !== b.Vec.length) throw new Error('coordinate dimensionality does not match');
  let sum = 0;
  for (let i = 0; i < a.Vec.length; i++) sum += (a.Vec[i]! - b.Vec[i]!) ** 2;
  const raw = Math.sqrt(sum) + a.Height + b.Height;
  const adjusted = raw + a.Adjustment + b.Adjustment;
  const seconds = adjusted > 0 ? adjusted : raw;
  return Math.trunc(seconds * 1e9) / 1e9;
}

/**
 * A compatible pair from two nodes' coordinates by network segment (Consul's
 * CoordinateSet.Intersect): the default segment, unless a node has exactly one segment — a client
 * agent's — which then decides (the second node's, if both have one).
 */
export function intersectSegments(a: ReadonlyMap<string, Coordinate>, b: ReadonlyMap<string, Coordinate>): [Coordinate | undefined, Coordinate | undefined] {
  let segment = '';
  if (a.size === 1) segment = a.keys().next().value!;
  if (b.size === 1) segment = b.keys().next().value!;
  return [a.get(segment), b.get(segment)];
}
