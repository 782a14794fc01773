import {
  EntryType,
  FrameDecoder,
  FrameEncoder,
  InMemoryNetwork,
  RemoteError,
  RpcConnectionError,
  RpcTimeoutError,
  TcpTransport,
  type Message,
  type Transport,
} from '@registry/raft';

const open: Transport[] = [];
async function listen(port = 0): Promise<TcpTransport> {
  const t = await TcpTransport.listen({ host: '127.0.0.1', port });
  open.push(t);
  return t;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((t) => t.close()));
});

function inbox(t: Transport): Message[] {
  const got: Message[] = [];
  t.onMessage((m) => got.push(m));
  return got;
}

async function until(cond: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

const append = (from: string, to: string, index: number): Message => ({
  type: 'append',
  from,
  to,
  term: 3,
  prevIndex: index - 1,
  prevTerm: 3,
  entries: [{ index, term: 3, type: EntryType.Normal, data: new Uint8Array([1, 2, 3, index % 256]) }],
  commit: index - 1,
});

describe('frame codec', () => {
  test('values survive a byte stream cut at every possible position', () => {
    const enc = new FrameEncoder();
    const values = [{ a: 1 }, [1, 'two', new Uint8Array([3])], 'x'.repeat(300)];
    const stream = Buffer.concat(values.map((v) => enc.encode(v)));
    for (let cut = 0; cut <= stream.length; cut++) {
      const dec = new FrameDecoder();
      const out = [...dec.push(stream.subarray(0, cut)), ...dec.push(stream.subarray(cut))];
      expect(out).toEqual([{ a: 1 }, [1, 'two', Buffer.from([3])], 'x'.repeat(300)]);
    }
  });

  test('a bulk last field is framed in parts, byte for byte the frame encode() makes, and decodes from any cut', () => {
    const enc = new FrameEncoder();
    const data = Buffer.from(Array.from({ length: 200_000 }, (_, i) => (i * 7) % 251));
    const request = [1, 9, 'raft.installSnapshot', { from: 'a', offset: 0, meta: { index: 5 }, data }];
    const parts = enc.encodeParts(request);
    expect(Array.isArray(parts)).toBe(true);
    expect((parts as Buffer[])[1]).toBe(data); // not copied
    expect(Buffer.concat(parts as Buffer[])).toEqual(enc.encode(request));
    // A small last field, or bulk bytes not last, are framed whole.
    expect(Buffer.isBuffer(enc.encodeParts([1, 1, 'm', { data: Buffer.alloc(10) }]))).toBe(true);
    expect(Buffer.isBuffer(enc.encodeParts([1, 1, 'm', { data, after: 1 }]))).toBe(true);
    const small = enc.encode([2, 1, null, 'ok']);
    const stream = Buffer.concat([...(parts as Buffer[]), small, ...(parts as Buffer[])]);
    for (const step of [1000, 65_536, 150_001, stream.length]) {
      const dec = new FrameDecoder();
      const out: unknown[] = [];
      for (let at = 0; at < stream.length; at += step) out.push(...dec.push(stream.subarray(at, at + step)));
      expect(out).toEqual([request, [2, 1, null, 'ok'], request]);
    }
  });

  test('a frame announcing more than the limit is refused', () => {
    const enc = new FrameEncoder();
    const dec = new FrameDecoder(10);
    expect(() => dec.push(enc.encode('x'.repeat(50)))).toThrow(/exceeds/);
  });
});

describe('TcpTransport', () => {
  test('reports the bound address when asked for port 0', async () => {
    const t = await listen();
    expect(t.address).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(t.address.endsWith(':0')).toBe(false);
  });

  test('two transports exchange Raft messages in both directions, in order, bytes intact', async () => {
    const a = await listen();
    const b = await listen();
    const atA = inbox(a);
    const atB = inbox(b);
    for (let i = 1; i <= 200; i++) a.send({ id: 'b', address: b.address }, append('a', 'b', i));
    b.send({ id: 'a', address: a.address }, { type: 'heartbeatResp', from: 'b', to: 'a', term: 3, ctx: 7 });
    await until(() => atB.length === 200 && atA.length === 1);
    expect(atB.map((m) => (m.type === 'append' ? m.entries[0].index : -1))).toEqual(
      Array.from({ length: 200 }, (_, i) => i + 1),
    );
    const last = atB[199];
    expect(last.type === 'append' && [...last.entries[0].data]).toEqual([1, 2, 3, 200]);
    expect(atA[0]).toEqual({ type: 'heartbeatResp', from: 'b', to: 'a', term: 3, ctx: 7 });
  });

  test('a received message comes with the listening address of its sender', async () => {
    const a = await listen();
    const b = await listen();
    const senders: (string | undefined)[] = [];
    b.onMessage((_m, fromAddress) => senders.push(fromAddress));
    a.send({ id: 'b', address: b.address }, append('a', 'b', 1));
    await until(() => senders.length === 1);
    expect(senders).toEqual([a.address]);
  });

  test('an RPC call resolves with the remote handler result', async () => {
    const a = await listen();
    const b = await listen();
    b.handle('echo', async (body) => ({ echoed: body }));
    await expect(a.call(b.address, 'echo', { n: 1 }, 2000)).resolves.toEqual({ echoed: { n: 1 } });
    const many = await Promise.all(Array.from({ length: 50 }, (_, i) => a.call(b.address, 'echo', i, 2000)));
    expect(many).toEqual(Array.from({ length: 50 }, (_, i) => ({ echoed: i })));
  });

  test('a remote handler error rejects the call with its message, name and data', async () => {
    const a = await listen();
    const b = await listen();
    b.handle('fail', () => {
      const err = new Error('no leader here') as Error & { data?: unknown };
      err.name = 'NotLeaderError';
      err.data = { leader: '127.0.0.1:1' };
      throw err;
    });
    const rejection = a.call(b.address, 'fail', null, 2000);
    await expect(rejection).rejects.toBeInstanceOf(RemoteError);
    await expect(rejection).rejects.toMatchObject({
      message: 'no leader here',
      remoteName: 'NotLeaderError',
      data: { leader: '127.0.0.1:1' },
    });
    await expect(a.call(b.address, 'nope', null, 2000)).rejects.toThrow(/unknown rpc method "nope"/);
  });

  test('a call that gets no answer rejects with a timeout error after the deadline', async () => {
    const a = await listen();
    const b = await listen();
    b.handle('hang', () => new Promise(() => undefined));
    const started = Date.now();
    const call = a.call(b.address, 'hang', null, 200);
    await expect(call).rejects.toBeInstanceOf(RpcTimeoutError);
    await expect(call).rejects.toThrow(/rpc hang to .* timed out after 200 ms/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
  });

  test('a call to an address where nobody listens fails with a connection error', async () => {
    const a = await listen();
    const gone = await listen();
    const address = gone.address;
    await gone.close();
    await expect(a.call(address, 'echo', null, 2000)).rejects.toBeInstanceOf(RpcConnectionError);
  });

  test('reconnects after the peer restarts on the same address', async () => {
    const a = await listen();
    let b = await listen();
    const port = Number(b.address.split(':')[1]);
    b.handle('ping', () => 'pong');
    expect(await a.call(b.address, 'ping', null, 2000)).toBe('pong');
    await b.close();
    b = await listen(port);
    b.handle('ping', () => 'pong again');
    const atB = inbox(b);
    // Messages sent while the link is down are dropped; Raft would resend, and so do we.
    const deadline = Date.now() + 5000;
    while (atB.length === 0 && Date.now() < deadline) {
      a.send({ id: 'b', address: b.address }, append('a', 'b', 1));
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(atB.length).toBeGreaterThan(0);
    expect(await a.call(b.address, 'ping', null, 2000)).toBe('pong again');
  });

  test('close rejects calls in flight', async () => {
    const a = await listen();
    const b = await listen();
    b.handle('hang', () => new Promise(() => undefined));
    const call = a.call(b.address, 'hang', null, 5000);
    await new Promise((r) => setTimeout(r, 50));
    open.splice(open.indexOf(a), 1);
    await a.close();
    await expect(call).rejects.toThrow(/closed/);
  });
});

describe('InMemoryNetwork', () => {
  test('delivers messages and calls between its transports', async () => {
    const net = new InMemoryNetwork();
    const a = net.transport();
    const b = net.transport();
    const atB = inbox(b);
    b.handle('echo', (x) => x);
    a.send({ id: 'b', address: b.address }, append('a', 'b', 1));
    expect(await a.call(b.address, 'echo', [1, 2])).toEqual([1, 2]);
    await until(() => atB.length === 1);
  });

  test('a partition drops messages and fails calls across it until healed', async () => {
    const net = new InMemoryNetwork();
    const [a, b, c] = [net.transport(), net.transport(), net.transport()];
    const atB = inbox(b);
    const atC = inbox(c);
    net.partition([a.address, b.address], [c.address]);
    a.send({ id: 'b', address: b.address }, append('a', 'b', 1));
    a.send({ id: 'c', address: c.address }, append('a', 'c', 1));
    c.handle('echo', (x) => x);
    await expect(a.call(c.address, 'echo', 1, 500)).rejects.toBeInstanceOf(RpcConnectionError);
    await until(() => atB.length === 1);
    expect(atC).toHaveLength(0);
    net.heal();
    a.send({ id: 'c', address: c.address }, append('a', 'c', 2));
    await until(() => atC.length === 1);
    expect(await a.call(c.address, 'echo', 2, 500)).toBe(2);
  });
});
