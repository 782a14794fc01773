// Start-up leaves V8's young generation at its largest (issue #30, docs/benchmarks.md "Memory at
// rest"): loading ~1,100 modules survives every scavenge, so V8 grows the two semi-spaces to Node
// 20's 16 MiB maximum, and an idle agent touches all 32 MiB of them as it slowly allocates. V8
// gives them back only at a GC made while the allocation rate is low (under ~1 MB/s over the last
// 5 s) — for an idle agent the next scavenge, which may come minutes later. So, once started, the
// agent asks for a scavenge every few seconds while its event loop is idle, until one finds the
// rate low and shrinks the young generation, then stops (after a minute at most). A scavenge costs what survives the young generation, not the heap's
// size (~1 ms at rest; a full GC of a large restored store would not be cheap), and a young
// generation that a later burst needs grows again as before: only the start-up's leftover goes.
import { performance } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type GcFunction = (options?: { type?: 'major' | 'minor'; execution?: 'sync' | 'async' }) => void;

const INTERVAL_MS = 2_500;
const MAX_TRIES = 24; // one minute: a start-up busy longer than that is a load, and V8 tunes for it
/** Above V8's initial semi-spaces (1 MiB each in Node 20): the start-up grew them. */
const GROWN_BYTES = 4 * 1024 * 1024;
/**
 * A loop busier than this over the last interval is not idle: its allocation rate is high, so a
 * scavenge would not shrink anything and would only promote early what a busy agent allocated.
 */
const BUSY_UTILIZATION = 0.25;

function newSpace(): { size: number; used: number } {
  const s = getHeapSpaceStatistics().find((space) => space.space_name === 'new_space');
  return { size: s?.space_size ?? 0, used: s?.space_used_size ?? 0 };
}

/**
 * V8's `gc` without running node with --expose-gc: the flag only installs the function in contexts
 * created while it is set, so one throwaway context is made with it on and the flag is turned off
 * again — the agent's own context never gains a `gc` global.
 */
function gcFunction(): GcFunction {
  const existing = (globalThis as { gc?: GcFunction }).gc;
  if (typeof existing === 'function') return existing;
  setFlagsFromString('--expose-gc');
  try {
    return runInNewContext('gc') as GcFunction;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}

/**
 * What a restore lets the young generation hold before it asks for a scavenge (issue #34). Nearly
 * all a restore allocates survives, so every scavenge promotes nearly all it finds. V8 left alone
 * fills the 16 MiB semi-space and copies all of it at once: pauses of 50–69 ms at 1 GiB on a slow VM.
 * Checked after each step of the restore (a few hundred items, ~300 KB allocated), a scavenge finds
 * a little over 256 KiB. A scavenge's cost is not only what it copies: on this VM it grew through a
 * restore to 6–20 ms even for ~115 KB promoted (the old generation it walks grows), so the budget
 * bounds the copy and the step bounds how often. Checked only between 4 ms slices with a 1 MiB
 * budget, each scavenge found 1.5–3.6 MB. restore-fresh.js, six pairs: longest GC pause 43–72 ms
 * then, 17–32 after each step at 256 KiB; p90 11–37 then, 2.5–5.8; the restore ~15 % longer (709
 * scavenges against 155). 512 KiB would win back ~8 % at a p90 of 5.5–11 ms.
 */
export const RESTORE_YOUNG_BYTES = 256 * 1024;

/**
 * A function for the gaps between a long job's steps: it scavenges when the young generation holds
 * more than `bytes` over what the last scavenge left, so that the job's survivors are copied in
 * small pauses of its own timing instead of one large one in the middle of a step.
 */
export function scavengeAbove(bytes: number): () => void {
  let gc: GcFunction | undefined;
  // What the last scavenge left: survivors of one scavenge stay young until the next, so the
  // budget is counted from there — else a young generation left above it is scavenged on every
  // call for nothing (32 scavenges of 0.5 ms in one turn of a restart's first pieces).
  let left = 0;
  return () => {
    if (newSpace().used - left <= bytes) return;
    gc ??= gcFunction();
    gc({ type: 'minor' });
    left = newSpace().used;
  };
}

/** Starts the timer; the returned function stops it early (stop of the agent). */
export function shrinkYoungGenerationWhenIdle(): () => void {
  let gc: GcFunction | undefined;
  let tries = 0;
  let loop = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    tries += 1;
    if (newSpace().size <= GROWN_BYTES) return clearInterval(timer);
    const busy = performance.eventLoopUtilization(loop).utilization > BUSY_UTILIZATION;
    loop = performance.eventLoopUtilization();
    if (busy) {
      if (tries >= MAX_TRIES) clearInterval(timer);
      return;
    }
    gc ??= gcFunction();
    gc({ type: 'minor' });
    if (newSpace().size <= GROWN_BYTES || tries >= MAX_TRIES) clearInterval(timer);
  }, INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/** Above the 64 MiB of new external memory past which V8 starts marking (see below). */
const REPLACED_STATE_NUDGE_BYTES = 128 * 1024 * 1024;

/**
 * After a restore swapped its state in (issue #34): V8 schedules its collections by the memory it
 * can count, and the replaced state's bytes are in SharedArrayBuffers it does not (the store's
 * arenas, raft's entry bytes), so a server idle after a restore could hold the old state beside the
 * new one until some later collection, minutes away. A plain ArrayBuffer of 128 MiB, dropped at
 * once, tells V8 what an addon's AdjustAmountOfExternalAllocatedMemory would: more than 64 MiB of
 * new external memory makes it start an incremental mark-compact (marked concurrently, a short
 * pause at the end), which frees the old state and the buffer itself. The buffer costs no resident
 * memory: glibc maps an allocation that large and never writes its zero pages. (A full collection
 * asked for directly stopped a server 175 ms at 192 MiB.)
 */
export function collectReplacedState(): void {
  void new ArrayBuffer(REPLACED_STATE_NUDGE_BYTES);
}
