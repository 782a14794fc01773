// What the tests of listings built in steps (issue #16) share: a lane they open one step at a time,
// a store that logs its writes (to build the same state from scratch, in one go), and a read that
// settles while random writes land between the steps of its build.
import { Store, type Command, type Settled, type StepLane } from '@registry/store';

/** A lane the test opens one step at a time, so that writes land between steps where it chooses. */
export class ManualLane implements StepLane {
  private readonly waiting: Array<() => void> = [];
  steps = 0;

  turn(): Promise<void> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  done(): void {
    this.steps++;
  }

  /** Lets the next waiting step run; resolves after it ran. */
  async grant(): Promise<boolean> {
    const next = this.waiting.shift();
    if (!next) return false;
    next();
    await new Promise((resolve) => setImmediate(resolve));
    return true;
  }
}

/** The lane of this test file (jest loads this module once per file), where LoggedStore's builds take turns. */
export const lane = new ManualLane();

/**
 * A store whose writes are logged, with a seeded source of random numbers for the writes. Its builds
 * take turns in `lane`, with steps of ~0.05 ms: a build of a few thousand rows takes many of them.
 */
export abstract class LoggedStore {
  readonly store = new Store({ listingLane: lane, listingStepMs: 0.05 });
  readonly log: Command[] = [];

  constructor(private seed: number) {}

  rand(n: number): number {
    this.seed = (this.seed * 1103515245 + 12345) % 2 ** 31;
    return this.seed % n;
  }

  apply(cmd: Command): void {
    this.log.push(cmd);
    this.store.apply(this.log.length, cmd);
  }

  /** A few random writes. */
  abstract writeSome(): void;

  /** A store that applied the same writes and builds each listing in one go. */
  fromScratch(): Store {
    const s = new Store();
    this.log.forEach((cmd, i) => s.apply(i + 1, cmd));
    return s;
  }
}

export type Read = (s: Store) => unknown;

/** The read as one that can wait (Store.tryRead): the build's promise, or the answer. */
export function tryDeferred(s: Store, read: Read): Settled<unknown> {
  return s.tryRead(() => read(s));
}

/** The answer of a read that can wait, which must not have to (no build pending). */
export function readWaiting(s: Store, read: Read): unknown {
  const r = tryDeferred(s, read);
  if (!('value' in r)) throw new Error('a build is pending');
  return r.value;
}

/** Runs the build step by step with writes between steps, then reads; answers the settled answer. */
export async function buildWithWritesBetweenSteps(f: LoggedStore, read: Read): Promise<{ value: unknown; steps: number }> {
  let steps = 0;
  for (let attempt = 0; attempt < 5; attempt++) {
    const first = tryDeferred(f.store, read);
    if ('value' in first) return { value: first.value, steps };
    let done = false;
    void first.pending.then(() => (done = true));
    while (!done) {
      f.writeSome();
      expect(await lane.grant()).toBe(true);
      steps++;
      await Promise.resolve();
    }
  }
  throw new Error('the listing never settled');
}
