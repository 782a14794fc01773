// A client agent's choice of server (client/server-link.ts) is shared by its heartbeats and its
// requests, which run side by side. A failure that comes back late — a call that waited out its
// timeout on a silent server — must not move the choice off a server that has answered since:
// that put a client agent that could reach one server of three back onto the silent ones.
// A fake transport whose answers the test releases one by one, so the order is the test's.
import { RpcTimeoutError, type Transport } from '@registry/raft';
import { ServerLink } from '../../src/client/server-link';

type Pending = { address: string; method: string; resolve: (v: unknown) => void; reject: (e: Error) => void };

class HeldTransport {
  readonly calls: Pending[] = [];
  readonly address = 'client:1';
  call(address: string, method: string): Promise<unknown> {
    return new Promise((resolve, reject) => this.calls.push({ address, method, resolve, reject }));
  }
  /** The first call to `address` not yet answered. */
  next(address: string): Pending {
    const i = this.calls.findIndex((c) => c.address === address);
    if (i < 0) throw new Error(`no call to ${address} waiting (waiting: ${this.calls.map((c) => c.address).join(', ')})`);
    return this.calls.splice(i, 1)[0]!;
  }
  timeOut(address: string): void {
    const c = this.next(address);
    c.reject(new RpcTimeoutError(address, c.method, 9_000));
  }
}

const turn = () => new Promise((r) => setImmediate(r));

test('a late failure from a silent server does not move requests off the server that answered in the meantime', async () => {
  const transport = new HeldTransport();
  const link = new ServerLink(transport as unknown as Transport, ['silent-a:8300', 'live:8300', 'silent-c:8300']);
  expect(link.current).toBe('silent-a:8300');

  // A heartbeat and a write both go to silent-a.
  const heartbeat = link.call('client.heartbeat', {}, 9_000, 9_000);
  const write = link.write('client.apply', () => ({}), 15_000);
  await turn();
  expect(transport.calls.map((c) => c.address)).toEqual(['silent-a:8300', 'silent-a:8300']);

  // The heartbeat's wait runs out first; it moves on to live, which answers.
  transport.timeOut('silent-a:8300');
  await turn();
  transport.next('live:8300').resolve({ ok: true, value: 'beat' });
  expect(await heartbeat).toEqual({ ok: true, value: 'beat' });
  expect(link.current).toBe('live:8300');

  // Then the write's wait on silent-a runs out: it goes to live too, not on to silent-c.
  transport.timeOut('silent-a:8300');
  await turn();
  expect(transport.calls.map((c) => c.address)).toEqual(['live:8300']);
  transport.next('live:8300').resolve({ ok: true, value: true });
  expect(await write).toEqual({ ok: true, value: true });
  expect(link.current).toBe('live:8300');
});

test('one request alone still goes round the servers until one answers', async () => {
  const transport = new HeldTransport();
  const link = new ServerLink(transport as unknown as Transport, ['silent-a:8300', 'silent-b:8300', 'live:8300']);
  const call = link.call('client.read', {}, 9_000, 60_000);
  await turn();
  transport.timeOut('silent-a:8300');
  await turn();
  transport.timeOut('silent-b:8300');
  await turn();
  transport.next('live:8300').resolve({ ok: true, value: 1 });
  expect(await call).toEqual({ ok: true, value: 1 });
  expect(link.current).toBe('live:8300');
});

test('a server that answered is where requests go next, though another request had moved on meanwhile', async () => {
  const transport = new HeldTransport();
  const link = new ServerLink(transport as unknown as Transport, ['a:8300', 'b:8300']);
  const slow = link.call('client.read', {}, 9_000, 9_000);
  const failing = link.call('client.read', {}, 9_000, 9_000);
  await turn();
  // The second call's attempt on a fails at once (a lost connection), so requests move to b…
  transport.calls[1]!.reject(new RpcTimeoutError('a:8300', 'client.read', 9_000));
  transport.calls.splice(1, 1);
  await turn();
  expect(link.current).toBe('b:8300');
  // …and then a answers the first call after all: requests go back to a.
  transport.next('a:8300').resolve({ ok: true, value: 'late' });
  expect(await slow).toEqual({ ok: true, value: 'late' });
  expect(link.current).toBe('a:8300');
  transport.next('b:8300').resolve({ ok: true, value: 'b' });
  expect(await failing).toEqual({ ok: true, value: 'b' });
});
