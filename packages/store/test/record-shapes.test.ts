// Rows of one table share one hidden class (indexed-record.ts, kv-records.ts kvEntry): made as
// `{ ...data, CreateIndex, ModifyIndex }`, every row had a map and descriptor array of its own in
// V8 — ~280 bytes more per row and a runtime call per write. V8's own %HaveSameMap tells, compiled
// after the flag that allows it is set. The KV table is the one whose rows a read hands out as
// they are stored (the catalog's and the sessions' reads copy theirs), so it is the one checked.
import { setFlagsFromString } from 'node:v8';
import { Store, type Command } from '@registry/store';

setFlagsFromString('--allow-natives-syntax');
const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;

/** How many of `rows` have another hidden class than the row before them. */
function shapeChanges(rows: readonly object[]): number {
  let changes = 0;
  for (let i = 1; i < rows.length; i++) if (!haveSameMap(rows[i - 1], rows[i])) changes++;
  return changes;
}

const set = (key: string, value: string): Command => ({ type: 'kv.apply', op: { Verb: 'set', Key: key, Value: Buffer.from(value), Flags: 0 } });

test('KV entries written, rewritten and restored share one hidden class', () => {
  const s = new Store();
  let index = 0;
  for (let i = 0; i < 300; i++) s.apply(++index, set(`k/${String(i).padStart(4, '0')}`, `v${i}`));
  for (let i = 0; i < 300; i += 3) s.apply(++index, set(`k/${String(i).padStart(4, '0')}`, `again${i}`));
  const written = s.kvList('k/').value;
  expect(written).toHaveLength(300);
  expect(shapeChanges(written)).toBe(0);

  const restored = new Store();
  restored.restore(s.snapshot());
  const back = restored.kvList('k/').value;
  expect(back).toHaveLength(300);
  expect(shapeChanges(back)).toBe(0);
  // Applied and restored entries alike: a read of either stays monomorphic.
  expect(haveSameMap(written[0], back[0])).toBe(true);
});
