// A restore's arenas have their pages mapped before the read into them starts (issue #34,
// store/page-mapper.ts): the kernel's copy into unmapped memory takes its page faults under the
// process's memory-map lock, which V8's collections then wait for. Shown through Store.restoreFrom:
// by the time the source is asked to read into an arena, the process's resident memory has grown by
// that arena; the thread that mapped it is gone again a few seconds after the restore.
import { readFileSync, readdirSync } from 'node:fs';
import { Store, type Command, type RequestStamp } from '@registry/store';
import { fullGc } from './support/full-gc';

const kv = (key: string, value: Uint8Array): Command => ({ type: 'kv.apply', op: { Verb: 'set', Key: key, Value: value, Flags: 0 } }) as Command;
const stamp = (i: number): RequestStamp => ({ id: `r.${i}`, at: 1_000 + i });
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resident bytes of this process (/proc/self/statm: pages). */
const residentBytes = () => Number(readFileSync('/proc/self/statm', 'utf8').split(' ')[1]) * 4096;
const threads = () => readdirSync('/proc/self/task').length;

const ARENA = 48 << 20;


test('each arena is resident before its read starts, and the mapping thread stops when idle', async () => {
  const origin = new Store();
  // 56 MiB of values that do not compress: two arenas, the first 48 MiB.
  let index = 0;
  for (let n = 0; n < 14; n++) {
    const value = new Uint8Array(4 << 20);
    for (let i = 0; i < value.length; i += 4) value[i] = (i * 2654435761 + n) >>> 24;
    origin.apply(++index, kv(`k/${n}`, value), stamp(index));
  }
  const data = origin.snapshot();
  const threadsBefore = threads();
  const residentAtRead: number[] = [];
  let before = 0;
  const source = {
    chunks: 1,
    size: data.length,
    read: async (): Promise<Uint8Array> => data,
    readRange: async (offset: number, into: Uint8Array) => {
      residentAtRead.push(residentBytes() - before);
      into.set(data.subarray(offset, offset + into.length));
      before = residentBytes();
    },
  };
  const restored = new Store();
  // Garbage freed during the restore would lower the count: collected first, and the origin (56 MiB
  // of values) kept alive to the end.
  const gc = fullGc();
  gc();
  await wait(50);
  gc();
  before = residentBytes();
  await restored.restoreFrom(source, { arenaBytes: ARENA, arenaMinSnapshotBytes: 0 });
  expect(Buffer.compare(restored.snapshot(), data)).toBe(0);
  expect(origin.kvGet('k/13').value!.Value!.length).toBe(4 << 20);
  // Unmapped, a new arena adds nothing resident until it is written (calloc maps fresh zero pages).
  expect(residentAtRead).toHaveLength(2);
  expect(residentAtRead[0]).toBeGreaterThanOrEqual(ARENA * 0.9);
  expect(residentAtRead[1]).toBeGreaterThanOrEqual((data.length - ARENA) * 0.9);
  // The worker that mapped them ends after a few idle seconds (it holds an isolate's memory).
  for (let i = 0; i < 100 && threads() > threadsBefore; i++) await wait(200);
  expect(threads()).toBeLessThanOrEqual(threadsBefore);
}, 60_000);
