// What the first-build tests of large listings over HTTP share (issue #16): loading an agent with
// tens of thousands of rows through /v1/txn, and a big read sent beside small ones, which show
// whether the big read's build held the event loop (the agent runs in the test's process).
import { http } from './dev-agent';

/**
 * Writes items 0…count-1 to the agent at `url` through /v1/txn, `perTxn` items a transaction
 * (`opsOf(n)`: item n's operations), four writers at a time: loading is not what is tested.
 */
export async function loadThroughTxn(url: string, count: number, perTxn: number, opsOf: (n: number) => unknown[]): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < count) {
        const first = next;
        next += perTxn;
        const ops: unknown[] = [];
        for (let n = first; n < Math.min(first + perTxn, count); n++) ops.push(...opsOf(n));
        const r = await http(url, 'PUT', '/v1/txn', ops);
        if (r.status !== 200) throw new Error(`txn failed: ${r.status} ${r.text}`);
      }
    }),
  );
}

/**
 * Sends the big read, then a small read every 5 ms until the big answer's headers arrive; answers
 * the big answer and how many small reads were answered meanwhile.
 */
export async function bigReadBesideSmallOnes(url: string, path: string): Promise<{ big: unknown[]; smallAnswered: number }> {
  let headersIn = false;
  let smallAnswered = 0;
  const big = fetch(url + path).then((res) => {
    headersIn = true;
    expect(res.status).toBe(200);
    return res.json() as Promise<unknown[]>;
  });
  const small = (async () => {
    await new Promise((r) => setTimeout(r, 20));
    while (!headersIn) {
      const r = await http(url, 'GET', '/v1/catalog/node/test-agent');
      expect(r.status).toBe(200);
      if (!headersIn) smallAnswered++;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  const [answer] = await Promise.all([big, small]);
  return { big: answer, smallAnswered };
}
