// Issue 31, hostile peers: whoever can reach a server port can send it anything. Sent here to the
// leader and to a follower of a real three-server cluster, each on its own connection: bytes that are
// no frame (an HTTP request, whose first four bytes announce a 1.2 GB frame), a frame announcing
// 4 GiB (never allocated), a body that is not msgpack, msgpack of the wrong shape, a response nobody
// asked for, a truncated frame left hanging, and well-formed Raft messages and a snapshot piece from
// an id that is not a member, with terms far ahead (which, taken, would depose the leader). The
// servers must close the bad connections, keep their leader and term, keep applying and serving
// writes and reads, and count what they refused.
import { connect, type Socket } from 'node:net';
import { FrameEncoder } from '@registry/raft';
import { ClusterHarness } from '../cluster/support/cluster-harness';
import { eventually, sleep } from '../support/wait';
import { raftStats, refusalCounts } from './support';

jest.setTimeout(90_000);

let cluster: ClusterHarness | undefined;
const sockets: Socket[] = [];

afterAll(async () => {
  for (const s of sockets) s.destroy();
  await cluster?.stop();
});

interface Sent {
  what: string;
  socket: Socket;
  closed: boolean;
  answer: Buffer;
}

/** Opens a connection to `port`, writes `bytes` and records what comes back and whether it is closed. */
function send(what: string, port: number, bytes: Buffer): Promise<Sent> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    sockets.push(socket);
    const sent: Sent = { what, socket, closed: false, answer: Buffer.alloc(0) };
    socket.on('error', () => undefined);
    socket.on('data', (d: Buffer) => (sent.answer = Buffer.concat([sent.answer, d])));
    socket.on('close', () => (sent.closed = true));
    socket.on('connect', () => socket.write(bytes, () => resolve(sent)));
  });
}

const encoder = new FrameEncoder();
const frame = (value: unknown) => encoder.encode(value);
/** A frame header announcing `length` bytes, followed by `body`. */
function framed(length: number, body: Buffer): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt32BE(length, 0);
  return Buffer.concat([head, body]);
}

test('garbage, oversize and wrong-shape frames and Raft messages from strangers change nothing', async () => {
  cluster = await ClusterHarness.start({ size: 3 });
  const c = cluster;
  const leader = await c.waitForLeader(40_000);
  const follower = (leader + 1) % 3;
  expect((await c.http(follower, 'PUT', '/v1/kv/h/before', 'b', { timeoutMs: 10_000 })).body).toBe('true');
  const lead = await raftStats(c, leader);
  const fol = await raftStats(c, follower);
  expect(lead.role).toBe('leader');
  const ahead = lead.term + 1000;

  const bad = (port: number): Array<Promise<Sent>> => [
    send('an HTTP request', port, Buffer.from('GET /v1/status/leader HTTP/1.1\r\nHost: x\r\n\r\n')),
    send('a frame announcing 4 GiB', port, framed(0xffff_fff0, Buffer.alloc(64, 7))),
    send('a body that is not msgpack', port, framed(3, Buffer.from([0xc1, 0xc1, 0xc1]))),
    send('msgpack that is no frame', port, frame({ a: 1 })),
    send('a Raft frame without its fields', port, frame([0, { type: 'append', from: 'x' }, '127.0.0.1:1'])),
    send('a Raft message with a text term', port, frame([0, { type: 'heartbeat', from: 'x', to: lead.id, term: 'big', commit: 0 }, '127.0.0.1:1'])),
    send('an append with malformed entries', port, frame([0, { type: 'append', from: 'x', to: lead.id, term: 1, prevIndex: 0, prevTerm: 0, commit: 0, entries: 'no' }, '127.0.0.1:1'])),
    send('a request without a method', port, frame([1, 1, 7, null])),
    send('a response nobody asked for', port, frame([2, 1, null, 'surprise'])),
    send('a frame of no known kind', port, frame([9, 1, 2, 3])),
  ];
  const badToLeader = await Promise.all(bad(c.servers[leader]!.serverPort));
  const badToFollower = await Promise.all(bad(c.servers[follower]!.serverPort));
  // A truncated frame, left hanging: closed by the handshake timeout (default 5 s).
  const truncated = await send('a truncated frame', c.servers[leader]!.serverPort, framed(100, Buffer.alloc(10)));

  // Well-formed messages from an id that is no member, with a term far ahead, to both servers.
  const stranger = 'not-a-member-0000';
  const strangers = (to: string) => [
    { type: 'heartbeat', from: stranger, to, term: ahead, commit: 0 },
    { type: 'append', from: stranger, to, term: ahead, prevIndex: 0, prevTerm: 0, commit: 0, entries: [] },
    { type: 'vote', from: stranger, to, term: ahead, lastIndex: 1_000_000, lastTerm: ahead },
    { type: 'prevote', from: stranger, to, term: ahead, lastIndex: 1_000_000, lastTerm: ahead },
    { type: 'appendResp', from: stranger, to, term: ahead, success: false, matchIndex: 0, hint: 0 },
    { type: 'readIndex', from: stranger, to, term: ahead, ctx: 1 },
    { type: 'timeoutNow', from: stranger, to, term: lead.term },
  ];
  const toLeader = await send('Raft messages from a stranger', c.servers[leader]!.serverPort, Buffer.concat(strangers(lead.id).map((m) => frame([0, m, '127.0.0.1:1']))));
  const toFollower = await send('Raft messages from a stranger', c.servers[follower]!.serverPort, Buffer.concat(strangers(fol.id).map((m) => frame([0, m, '127.0.0.1:1']))));
  // A whole fake snapshot in one piece: refused, nothing restored.
  const piece = { from: stranger, to: fol.id, term: ahead, meta: { index: 1_000_000, term: ahead, configuration: { servers: [{ id: stranger, address: '127.0.0.1:1' }] } }, transfer: 't', offset: 0, size: 3, done: true, data: Buffer.from([1, 2, 3]) };
  const snapshot = await send('a snapshot piece from a stranger', c.servers[follower]!.serverPort, frame([1, 42, 'raft.installSnapshot', piece]));

  // Writes go on, through the leader and the follower, and the follower applies them.
  for (let i = 0; i < 5; i++) {
    expect((await c.http(leader, 'PUT', `/v1/kv/h/l${i}`, `v${i}`, { timeoutMs: 10_000 })).body).toBe('true');
    expect((await c.http(follower, 'PUT', `/v1/kv/h/f${i}`, `v${i}`, { timeoutMs: 10_000 })).body).toBe('true');
    await sleep(200);
  }
  const target = (await raftStats(c, leader)).commitIndex;
  expect(await eventually(async () => (await raftStats(c, follower)).appliedIndex >= target, 5_000)).toBe(true);
  expect((await c.http(follower, 'GET', '/v1/kv/h/l4?stale&raw')).body).toBe('v4');
  expect((await c.http(leader, 'GET', '/v1/kv/h/f4?raw')).body).toBe('v4');

  // Nobody moved: the same leader in the same term, on every server.
  for (const i of [0, 1, 2]) {
    const s = await raftStats(c, i);
    expect(s.term).toBe(lead.term);
    expect(s.leader).toBe(lead.id);
  }
  expect((await raftStats(c, leader)).role).toBe('leader');

  // Every bad connection is closed by the server.
  const badOnes = [...badToLeader, ...badToFollower];
  expect(await eventually(() => badOnes.every((s) => s.closed), 10_000)).toBe(true);
  // The snapshot piece gets an answer that refuses it, on a connection left open.
  expect(await eventually(() => snapshot.answer.length > 0, 5_000)).toBe(true);
  expect(snapshot.answer.toString('latin1')).toMatch(/not a member/);

  // The truncated frame was cut by the handshake timeout; the stranger's connections were kept
  // (they were well-formed frames; only the messages were dropped).
  expect(await eventually(() => truncated.closed, 10_000)).toBe(true);
  expect(toLeader.closed || toFollower.closed).toBe(false);

  for (const i of [leader, follower]) {
    const refused = await refusalCounts(c, i);
    expect(refused.bad_frame).toBeGreaterThanOrEqual(badToLeader.length);
    expect(refused.unknown_sender).toBeGreaterThanOrEqual(6);
    expect(c.logs(i)).toMatch(/server port: refusing connections or frames/);
    expect(c.running(i)).toBe(true);
  }
  expect((await refusalCounts(c, leader)).handshake_timeout).toBeGreaterThanOrEqual(1);
});
