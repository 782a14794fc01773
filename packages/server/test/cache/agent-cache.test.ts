import { AgentCache, type Fetcher } from '../../src/cache/agent-cache';

/** A fake server: a value with an index; blocking fetches wait for set(). */
class FakeSource {
  index = 1;
  value = 'v1';
  fetches = 0;
  fail = false;
  private wake: (() => void)[] = [];
  set(value: string): void {
    this.value = value;
    this.index++;
    for (const w of this.wake.splice(0)) w();
  }
  fetcher: Fetcher<string> = async (minIndex, signal) => {
    this.fetches++;
    if (this.fail) throw new Error('servers unreachable');
    if (minIndex > 0 && this.index <= minIndex) {
      await new Promise<void>((resolve) => {
        this.wake.push(resolve);
        signal.addEventListener('abort', () => resolve());
      });
    }
    if (this.fail) throw new Error('servers unreachable');
    return { index: this.index, value: this.value };
  };
}

const tick = (ms = 10) => new Promise((r) => setTimeout(r, ms));

describe('AgentCache', () => {
  let cache: AgentCache;
  afterEach(() => cache.stop());

  test('first get is a MISS that fetches; later gets are HITs without fetching', async () => {
    cache = new AgentCache();
    const src = new FakeSource();
    const a = await cache.get('k', src.fetcher);
    const b = await cache.get('k', src.fetcher);
    expect([a.hit, b.hit]).toEqual([false, true]);
    expect(b.value).toBe('v1');
    await tick();
    expect(src.fetches).toBe(2); // the first fetch and the parked background refresh
  });

  test('concurrent first gets share one fetch', async () => {
    cache = new AgentCache();
    const src = new FakeSource();
    const [x, y] = await Promise.all([cache.get('k', src.fetcher), cache.get('k', src.fetcher)]);
    expect([x.hit, y.hit]).toEqual([false, false]);
    expect(src.fetches).toBe(1);
  });

  test('the background refresh keeps the entry fresh; a blocked get wakes on the change', async () => {
    cache = new AgentCache();
    const src = new FakeSource();
    const first = await cache.get('k', src.fetcher);
    const blocked = cache.get('k', src.fetcher, { minIndex: first.index, waitMs: 5_000 });
    await tick();
    src.set('v2');
    const woke = await blocked;
    expect(woke.value).toBe('v2');
    expect(woke.index).toBe(2);
  });

  test('a blocked get returns the current value when its wait runs out', async () => {
    cache = new AgentCache();
    const src = new FakeSource();
    await cache.get('k', src.fetcher);
    const t0 = Date.now();
    const r = await cache.get('k', src.fetcher, { minIndex: 1, waitMs: 50 });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(45);
    expect(r.value).toBe('v1');
  });

  test('a failing first fetch leaves no entry: the next get fetches again', async () => {
    cache = new AgentCache();
    const src = new FakeSource();
    src.fail = true;
    await expect(cache.get('k', src.fetcher)).rejects.toThrow('servers unreachable');
    expect(cache.size).toBe(0);
    src.fail = false;
    expect((await cache.get('k', src.fetcher)).hit).toBe(false);
  });

  test('while refreshes fail, the cached value is served and Age counts from the last success', async () => {
    let now = 1_000_000;
    cache = new AgentCache({ now: () => now, retryMs: 5 });
    const src = new FakeSource();
    await cache.get('k', src.fetcher);
    src.fail = true;
    src.set('v2'); // wakes the parked refresh, which now fails
    await tick(20);
    now += 42_000;
    const r = await cache.get('k', src.fetcher);
    expect(r).toMatchObject({ value: 'v1', hit: true, ageS: 42 });
    src.fail = false;
    await tick(50);
    const back = await cache.get('k', src.fetcher);
    expect(back).toMatchObject({ value: 'v2', ageS: 0 });
  });

  test('an entry unused for the TTL is dropped', async () => {
    let now = 0;
    cache = new AgentCache({ now: () => now, ttlMs: 1_000 });
    const src = new FakeSource();
    await cache.get('k', src.fetcher);
    now = 5_000;
    src.set('v2'); // the refresh loop notices the idle entry on its next turn
    await tick(20);
    expect(cache.size).toBe(0);
  });
});
