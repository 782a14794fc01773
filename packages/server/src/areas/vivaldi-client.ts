// A server's own network coordinate, moved by measured round trips (the Vivaldi model Serf uses):
// each sample pulls or pushes this coordinate along the line to the other node's in proportion to
// the error between the estimated and the measured RTT, weighted by how sure each side is. Heights
// model the access link; the adjustment term averages what the Euclidean model cannot explain; a
// weak gravity keeps the whole system from drifting away from the origin. Pure: no clock, no I/O.
import type { Coordinate } from '@registry/store';

export const VIVALDI = {
  dimensions: 8,
  /** Largest (and starting) error: a new coordinate trusts itself least. */
  errorMax: 1.5,
  /** How fast the error estimate follows observed wrongness. */
  ce: 0.25,
  /** How far one sample moves the coordinate. */
  cc: 0.25,
  adjustmentWindow: 20,
  heightMin: 10e-6,
  /** Gravity's reach, in seconds: farther than this from the origin, the pull becomes noticeable. */
  gravityRho: 150,
  /** RTTs above this are taken to be measurement failures and ignored (seconds). */
  maxRtt: 10,
} as const;

const ZERO = 1e-6;

export function originCoordinate(): Coordinate {
  return { Vec: new Array<number>(VIVALDI.dimensions).fill(0), Error: VIVALDI.errorMax, Adjustment: 0, Height: VIVALDI.heightMin };
}

function magnitude(v: readonly number[]): number {
  return Math.sqrt(v.reduce((s, x) => s + x * x, 0));
}

/** Distance without the adjustment terms (what the model itself predicts). */
function rawDistance(a: Coordinate, b: Coordinate): number {
  return magnitude(a.Vec.map((x, i) => x - (b.Vec[i] ?? 0))) + a.Height + b.Height;
}

/** Unit vector from `b` towards `a` (random when they coincide, so two new nodes can separate). */
function unitAway(a: readonly number[], b: readonly number[], random: () => number): { unit: number[]; mag: number } {
  const diff = a.map((x, i) => x - (b[i] ?? 0));
  const mag = magnitude(diff);
  if (mag > ZERO) return { unit: diff.map((x) => x / mag), mag };
  const r = a.map(() => random() - 0.5);
  const rm = magnitude(r);
  return rm > ZERO ? { unit: r.map((x) => x / rm), mag: 0 } : { unit: a.map((_, i) => (i === 0 ? 1 : 0)), mag: 0 };
}

/** Move `c` by `force` seconds along the line away from `other` (towards it when negative). */
function push(c: Coordinate, other: Coordinate, force: number, random: () => number): Coordinate {
  const { unit, mag } = unitAway(c.Vec, other.Vec, random);
  const vec = c.Vec.map((x, i) => x + unit[i] * force);
  let height = c.Height;
  if (mag > ZERO) height = Math.max(VIVALDI.heightMin, ((c.Height + other.Height) * force) / mag + c.Height);
  return { ...c, Vec: vec, Height: height };
}

export class VivaldiClient {
  private coord: Coordinate = originCoordinate();
  private readonly samples: number[] = [];
  private next = 0;
  private updates = 0;

  constructor(private readonly random: () => number = Math.random) {}

  get coordinate(): Coordinate {
    return { ...this.coord, Vec: [...this.coord.Vec] };
  }

  /** Samples taken so far. */
  get observations(): number {
    return this.updates;
  }

  /**
   * Take one measured round trip `rttSeconds` to a node at `other`. Ignores unusable samples
   * (non-positive or absurd RTTs, coordinates of another dimensionality).
   */
  observe(other: Coordinate, rttSeconds: number): Coordinate {
    if (!(rttSeconds > 0) || rttSeconds > VIVALDI.maxRtt || other.Vec.length !== this.coord.Vec.length) return this.coordinate;
    const rtt = Math.max(rttSeconds, ZERO);
    const dist = rawDistance(this.coord, other);
    const wrongness = Math.abs(dist - rtt) / rtt;
    const totalError = Math.max(this.coord.Error + other.Error, ZERO);
    const weight = this.coord.Error / totalError;
    const error = Math.min(VIVALDI.errorMax, VIVALDI.ce * weight * wrongness + this.coord.Error * (1 - VIVALDI.ce * weight));
    let c = push({ ...this.coord, Error: error }, other, VIVALDI.cc * weight * (rtt - dist), this.random);

    // Adjustment: half the mean of what the model got wrong over the recent window.
    const sample = rtt - rawDistance(c, other);
    if (this.samples.length < VIVALDI.adjustmentWindow) this.samples.push(sample);
    else this.samples[this.next] = sample;
    this.next = (this.next + 1) % VIVALDI.adjustmentWindow;
    c = { ...c, Adjustment: this.samples.reduce((s, x) => s + x, 0) / (2 * VIVALDI.adjustmentWindow) };

    // Gravity towards the origin, negligible near it.
    const origin = originCoordinate();
    const fromOrigin = rawDistance(c, { ...origin, Height: 0 }) - c.Height;
    c = push(c, { ...origin, Height: 0 }, -((fromOrigin / VIVALDI.gravityRho) ** 2), this.random);

    if (c.Vec.every(Number.isFinite) && [c.Error, c.Adjustment, c.Height].every(Number.isFinite)) {
      this.coord = c;
      this.updates++;
    }
    return this.coordinate;
  }
}
