// Issue #16: catalog/service, tag- or node-meta-filtered health/service and health/state over
// thousands of rows are kept listings first built in steps (catalog/node-rows.ts, kept-reads.ts),
// not selected and sorted in one go per read. Whatever is written between the steps of a build,
// and after it, the answer equals, byte for byte, what a store that applied the same writes answers
// when it builds in one go; and it equals an independent derivation (a walk of every node's checks;
// the unfiltered health listing, filtered here).
import type { Command } from '@registry/store';
import { buildWithWritesBetweenSteps, LoggedStore, readWaiting, type Read } from './support/listing-steps';

const pad = (i: number) => String(i).padStart(5, '0');
const STATUSES = ['passing', 'warning', 'critical'];

function registerNode(i: number, status: string, output: string, tag: string): Command {
  return {
    type: 'catalog.register',
    req: {
      Node: i % 11 === 0 ? `NODE-${pad(i)}` : `node-${pad(i)}`,
      Address: `10.0.${i >> 8}.${i & 255}`,
      NodeMeta: { rack: `r${i % 7}` },
      Service: { ID: `Web-${i % 3}`, Service: 'web', Port: 8000 + (i % 50), Tags: [tag, 'all'] },
      Check: { CheckID: `web-alive-${i % 3}`, Name: 'web alive', Status: status, ServiceID: `Web-${i % 3}`, Output: output },
    },
  };
}

const nodeCheck = (i: number, status: string): Command => ({
  type: 'catalog.register',
  req: { Node: `node-${pad(i)}`, Address: `10.0.${i >> 8}.${i & 255}`, SkipNodeUpdate: true, Check: { CheckID: 'Disk', Name: 'disk', Status: status, ServiceID: '' } },
});
const second = (i: number): Command => ({
  type: 'catalog.register',
  req: { Node: `node-${pad(i)}`, SkipNodeUpdate: true, Service: { ID: `web-z${i}`, Service: 'web', Port: 9000, Tags: ['v2', 'all'] } },
});
const moveRack = (i: number, rack: string): Command => ({
  type: 'catalog.register',
  req: { Node: `node-${pad(i)}`, Address: `10.0.${i >> 8}.${i & 255}`, NodeMeta: { rack } },
});

class Fixture extends LoggedStore {
  constructor(
    seed: number,
    readonly size: number,
  ) {
    super(seed);
    for (let i = 0; i < size; i++) {
      this.apply(registerNode(i, STATUSES[i % 3], 'ok', i % 2 ? 'v1' : 'v2'));
      if (i % 5 === 0) this.apply(second(i));
      if (i % 4 === 0) this.apply(nodeCheck(i, 'passing'));
    }
  }
  writeSome(): void {
    for (let k = this.rand(4); k >= 0; k--) {
      const i = this.rand(this.size + this.size / 10);
      switch (this.rand(7)) {
        case 0:
          this.apply({ type: 'catalog.deregister', req: { Node: `node-${pad(i)}` } });
          break;
        case 1:
          this.apply(second(i));
          break;
        case 2:
          this.apply(nodeCheck(i, STATUSES[this.rand(3)]));
          break;
        case 3:
          this.apply(moveRack(i, `r${this.rand(7)}`));
          break;
        case 4:
          this.apply({ type: 'catalog.deregister', req: { Node: `node-${pad(i)}`, ServiceID: `web-${i % 3}` } });
          break;
        default:
          this.apply(registerNode(i, STATUSES[this.rand(3)], `out ${this.rand(1000)}`, this.rand(2) ? 'v1' : 'v2'));
      }
    }
  }
}

const READS: Record<string, Read> = {
  'catalog/service': (s) => s.catalogService('web'),
  'catalog/service?tag': (s) => s.catalogService('web', { tags: ['V1'] }),
  'catalog/service?node-meta': (s) => s.catalogService('web', { nodeMeta: { rack: 'r3' } }),
  'health/service?tag': (s) => s.healthService('web', { tags: ['v2'] }),
  'health/service?tag&passing': (s) => s.healthService('web', { tags: ['all'], passing: true }),
  'health/service?node-meta': (s) => s.healthService('web', { nodeMeta: { rack: 'r2' } }),
  'health/state/passing': (s) => s.healthState('passing'),
  'health/state/any?node-meta': (s) => s.healthState('any', { nodeMeta: { rack: 'r5' } }),
  'health/state/critical': (s) => s.healthState('critical'),
};

describe.each(Object.keys(READS))('%s over thousands of rows', (kind) => {
  const read = READS[kind];
  test.each([1, 2, 3])('writes between its build steps and after (seed %i): equal to a one-go build, byte for byte', async (seed) => {
    const f = new Fixture(seed, 2500);
    const { value, steps } = await buildWithWritesBetweenSteps(f, read);
    expect(steps).toBeGreaterThan(3);
    expect(JSON.stringify(value)).toBe(JSON.stringify(read(f.fromScratch())));
    for (let round = 0; round < 4; round++) {
      f.writeSome();
      expect(JSON.stringify(readWaiting(f.store, read))).toBe(JSON.stringify(read(f.fromScratch())));
    }
  });
});

test('the kept answers equal independent derivations after many writes', async () => {
  const f = new Fixture(7, 2000);
  for (const read of Object.values(READS)) await buildWithWritesBetweenSteps(f, read);
  for (let i = 0; i < 200; i++) f.writeSome();
  const s = f.store;
  // health/state: a walk of every node's checks, in node order then check ID order.
  const walk = s.catalogNodes().value.flatMap((n) => s.healthNode(n.Node).value.map((c) => ({ c, meta: n.Meta })));
  expect(s.healthState('passing').value).toEqual(walk.filter(({ c }) => c.Status === 'passing').map(({ c }) => c));
  expect(s.healthState('critical').value).toEqual(walk.filter(({ c }) => c.Status === 'critical').map(({ c }) => c));
  expect(s.healthState('any', { nodeMeta: { rack: 'r5' } }).value).toEqual(walk.filter(({ meta }) => meta?.rack === 'r5').map(({ c }) => c));
  // health/service filtered: the unfiltered health listing (health-listing.ts), filtered here.
  const all = s.healthService('web').value;
  const tagged = all.filter((e) => e.Service.Tags.includes('v2'));
  expect(tagged.length).toBeGreaterThan(500);
  expect(s.healthService('web', { tags: ['v2'] }).value).toEqual(tagged);
  expect(s.healthService('web', { nodeMeta: { rack: 'r2' } }).value).toEqual(all.filter((e) => e.Node.Meta?.rack === 'r2'));
  // catalog/service: the same instances in the same order, showing the same node and service.
  const shown = s.catalogService('web', { tags: ['v1'] }).value;
  const want = all.filter((e) => e.Service.Tags.includes('v1'));
  expect(shown.map((x) => [x.Node, x.ServiceID, x.ServicePort, x.ServiceTags, x.NodeMeta, x.Address])).toEqual(
    want.map((e) => [e.Node.Node, e.Service.ID, e.Service.Port, e.Service.Tags, e.Node.Meta, e.Node.Address]),
  );
});

test('the kept answers are copies of frozen rows: a caller cannot change what the next reader sees', () => {
  const f = new Fixture(3, 1500);
  const a = f.store.catalogService('web', { tags: ['v1'] }).value;
  a.pop();
  expect(() => ((a[0] as { Node: string }).Node = 'x')).toThrow();
  expect(f.store.catalogService('web', { tags: ['v1'] }).value.length).toBe(a.length + 1);
  const checks = f.store.healthState('any').value;
  expect(() => ((checks[0] as { Status: string }).Status = 'x')).toThrow();
});

test('many distinct large queries: only the most recent are kept, every answer stays exact', () => {
  const f = new Fixture(5, 1200);
  const scratch = () => f.fromScratch();
  for (let rack = 0; rack < 7; rack++) {
    for (const tag of ['v1', 'v2', 'all', 'none', 'V1', 'ALL']) f.store.catalogService('web', { tags: [tag], nodeMeta: { rack: `r${rack}` } });
  }
  f.writeSome();
  f.writeSome();
  const other = scratch();
  for (let rack = 0; rack < 7; rack++) {
    const q = { tags: ['all'], nodeMeta: { rack: `r${rack}` } };
    expect(JSON.stringify(f.store.catalogService('web', q))).toBe(JSON.stringify(other.catalogService('web', q)));
  }
});
