// TcpTransport batches the frames sent in one turn and writes them when the turn ends. A follower
// answers the leader from inside the promise chain of its Ready, and a tick queued from there runs
// only once that whole chain has run — the apply after the answer included — so the answer waited
// for the apply. flush() writes out what was sent so far at once.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { EntryType, TcpTransport, type Message } from '@registry/raft';

const RAFT_DIST = join(__dirname, '..', '..', 'dist', 'index.js');

// A receiver in a process of its own (its event loop runs while the sender's is held): it prints its
// address, then the wall-clock time each message arrives at.
const RECEIVER = `
const { TcpTransport } = require(${JSON.stringify(RAFT_DIST)});
TcpTransport.listen({ host: '127.0.0.1', port: 0 }).then((t) => {
  t.onMessage((m) => console.log(JSON.stringify({ index: m.prevIndex + 1, at: Date.now() })));
  console.log(JSON.stringify({ address: t.address }));
});
`;

let receiver: ChildProcess | undefined;
let sender: TcpTransport | undefined;
afterEach(async () => {
  receiver?.kill('SIGKILL');
  await sender?.close();
});

const append = (index: number): Message => ({
  type: 'append',
  from: 'a',
  to: 'b',
  term: 3,
  prevIndex: index - 1,
  prevTerm: 3,
  entries: [{ index, term: 3, type: EntryType.Normal, data: new Uint8Array([index]) }],
  commit: index - 1,
});

/** Holds this process's loop for `ms` (the apply that follows the answer in a Ready). */
function busy(ms: number): number {
  const end = Date.now() + ms;
  while (Date.now() < end);
  return Date.now();
}

async function measure(flush: boolean): Promise<{ arrived: number; released: number }> {
  receiver = spawn(process.execPath, ['-e', RECEIVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: receiver.stdout! })[Symbol.asyncIterator]();
  const { address } = JSON.parse((await lines.next()).value as string) as { address: string };
  sender = await TcpTransport.listen({ host: '127.0.0.1', port: 0 });
  const to = { id: 'b', address };
  // The connection first: a frame sent before it is up waits in the connection's queue.
  sender.send(to, append(1));
  expect(JSON.parse((await lines.next()).value as string).index).toBe(1);
  // As in a Ready's promise chain: send, then hold the loop in a later microtask.
  let released = 0;
  await Promise.resolve().then(() => {
    sender!.send(to, append(2));
    if (flush) sender!.flush();
    return Promise.resolve().then(() => (released = busy(300)));
  });
  const arrived = (JSON.parse((await lines.next()).value as string) as { at: number }).at;
  return { arrived, released };
}

test('flush() writes what was sent before the loop turns; without it the frame waits for the turn', async () => {
  const flushed = await measure(true);
  expect(flushed.arrived).toBeLessThan(flushed.released - 100);
  receiver?.kill('SIGKILL');
  await sender?.close();
  const batched = await measure(false);
  expect(batched.arrived).toBeGreaterThanOrEqual(batched.released - 5);
});
