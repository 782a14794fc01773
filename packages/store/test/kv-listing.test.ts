// A ?recurse read of a large prefix is kept between reads (kv/kv-listing.ts), following the KV
// table's journal of changed keys: whatever is written or deleted between two reads — under the
// prefix, beside it, one key or thousands — the kept answer and its index equal a fresh walk
// (kvList, with each entry's output made anew).
import { kvEntryOut, Store, type Command } from '@registry/store';

const set = (key: string, value: string): Command => ({ type: 'kv.apply', op: { Verb: 'set', Key: key, Value: Buffer.from(value), Flags: 0 } });
const del = (key: string): Command => ({ type: 'kv.apply', op: { Verb: 'delete', Key: key } });
const delTree = (prefix: string): Command => ({ type: 'kv.apply', op: { Verb: 'delete-tree', Key: prefix } });

function expectFresh(s: Store, prefix: string): void {
  const kept = s.kvRecurse(prefix);
  const fresh = s.kvList(prefix);
  expect(kept.value).toEqual(fresh.value.map((e) => kvEntryOut(e)));
  expect(kept.index).toBe(fresh.index);
}

test('random writes and deletes between reads of a kept prefix: always what a fresh walk gives', () => {
  const s = new Store();
  let index = 0;
  for (let i = 0; i < 1500; i++) s.apply(++index, set(`app/${String(i).padStart(5, '0')}`, `v${i}`));
  for (let i = 0; i < 50; i++) s.apply(++index, set(`other/${i}`, 'x'));
  expectFresh(s, 'app/');
  expectFresh(s, '');
  let seed = 5;
  const rand = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
  for (let round = 0; round < 150; round++) {
    for (let k = rand(10); k >= 0; k--) {
      const key = `app/${String(rand(1700)).padStart(5, '0')}`;
      const r = rand(5);
      if (r === 0) s.apply(++index, del(key));
      else if (r === 1) s.apply(++index, set(`other/${rand(60)}`, `o${round}`));
      else if (r === 2 && round % 25 === 0) s.apply(++index, delTree(`app/0${rand(10)}`));
      else s.apply(++index, set(key, `r${round}`));
    }
    expectFresh(s, 'app/');
    if (round % 10 === 0) expectFresh(s, '');
  }
});

test('more changes between two reads than the journal holds: the prefix is walked again', () => {
  const s = new Store();
  let index = 0;
  for (let i = 0; i < 1200; i++) s.apply(++index, set(`big/${i}`, 'v'));
  expectFresh(s, 'big/');
  for (let i = 0; i < 5000; i++) s.apply(++index, set(`big/${i % 1300}`, `w${i}`));
  s.apply(++index, del('big/7'));
  expectFresh(s, 'big/');
  // A prefix that shrinks below the kept size is still answered exactly.
  s.apply(++index, delTree('big/1'));
  expectFresh(s, 'big/');
  s.apply(++index, delTree('big/'));
  expectFresh(s, 'big/');
  expect(s.kvRecurse('big/').value).toEqual([]);
});
