// A store's large listing builds take turns in the lane it was given (StoreOptions.listingLane,
// issue #26: a dependency passed in, not a module global installed by whoever loads first), and a
// read that can wait gets { pending } as a value (Store.tryRead), then the same answer as a store
// that built in one go.
import { Store, type Command } from '@registry/store';
import { ManualLane } from './support/listing-steps';

const pad = (i: number) => String(i).padStart(5, '0');
const register = (i: number): Command => ({
  type: 'catalog.register',
  req: { Node: `n-${pad(i)}`, Address: '10.0.0.1', Service: { ID: 'web', Service: 'web', Port: 80 } },
});

function filled(lane?: ManualLane): Store {
  const s = new Store(lane ? { listingLane: lane, listingStepMs: 0.05 } : {});
  for (let i = 0; i < 2000; i++) s.apply(i + 1, register(i));
  return s;
}

test('two stores, two lanes: each build takes turns only in its own store lane', async () => {
  const laneA = new ManualLane();
  const laneB = new ManualLane();
  const a = filled(laneA);
  const b = filled(laneB);
  const read = (s: Store) => s.healthService('web');
  const pending = a.tryRead(() => read(a));
  expect('pending' in pending).toBe(true);
  if (!('pending' in pending)) return;
  // B's lane has nothing waiting: A's build never asks it for a turn.
  expect(await laneB.grant()).toBe(false);
  let done = false;
  void pending.pending.then(() => (done = true));
  for (let i = 0; i < 10_000 && !done; i++) {
    expect(await laneA.grant()).toBe(true);
    await Promise.resolve();
  }
  expect(done).toBe(true);
  expect(laneA.steps).toBeGreaterThan(1);
  expect(laneB.steps).toBe(0);
  const again = a.tryRead(() => read(a));
  expect('value' in again && JSON.stringify(again.value)).toBe(JSON.stringify(read(filled())));
  // A store read without tryRead finishes its build at once, whatever its lane.
  expect(JSON.stringify(read(b))).toBe(JSON.stringify(read(filled())));
  expect(laneB.steps).toBe(0);
});
