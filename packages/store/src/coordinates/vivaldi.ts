// Network coordinates as Serf's Vivaldi model (Consul lib/coordinate): a Euclidean position plus a
// height (the access-link latency) and an adjustment term, all in seconds.

export interface Coordinate {
  Vec: number[];
  Error: number;
  Adjustment: number;
  Height: number;
}

/** The reason a coordinate is unusable, or undefined when it is fine. */
export function coordinateProblem(c: unknown): string | undefined {
  if (typeof c !== 'object' || c === null) return 'coordinate must be an object';
  const o = c as Record<string, unknown>;
  if (!Array.isArray(o.Vec) || o.Vec.length === 0) return 'Vec must be a non-empty array of numbers';
  if (!o.Vec.every((x) => typeof x === 'number' && Number.isFinite(x))) return 'Vec must hold finite numbers';
  for (const f of ['Error', 'Adjustment', 'Height'] as const) {
    if (typeof o[f] !== 'number' || !Number.isFinite(o[f])) return `${f} must be a finite number`;
  }
  return undefined;
}

export function copyCoordinate(c: Coordinate): Coordinate {
  return { Vec: [...c.Vec], Error: c.Error, Adjustment: c.Adjustment, Height: c.Height };
}

/**
 * Estimated round-trip time in seconds: Euclidean distance plus both heights, then corrected by both
 * adjustments unless the correction would make it non-positive. Undefined for coordinates of
 * different dimensionality, which cannot be compared.
 */
export function estimatedRtt(a: Coordinate, b: Coordinate): number | undefined {
  if (a.Vec.length !== b.Vec.length) return undefined;
  let sum = 0;
  for (let i = 0; i < a.Vec.length; i++) {
    const d = (a.Vec[i] ?? 0) - (b.Vec[i] ?? 0);
    sum += d * d;
  }
  const raw = Math.sqrt(sum) + a.Height + b.Height;
  const adjusted = raw + a.Adjustment + b.Adjustment;
  return adjusted > 0 ? adjusted : raw;
}
