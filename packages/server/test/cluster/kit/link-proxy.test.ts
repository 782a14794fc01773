import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { LinkProxy } from '../support/link-proxy';

/** A target that greets every connection with "hi:" and then echoes; it keeps what each connection sent. */
interface Target {
  server: Server;
  address: string;
  received: string[];
  sockets: Socket[];
}

async function startTarget(): Promise<Target> {
  const target: Target = { server: createServer(), address: '', received: [], sockets: [] };
  target.server.on('connection', (socket) => {
    const n = target.received.push('') - 1;
    target.sockets.push(socket);
    socket.on('error', () => undefined);
    socket.write('hi:');
    socket.on('data', (chunk) => {
      target.received[n] += chunk.toString();
      socket.write(chunk);
    });
  });
  await new Promise<void>((resolve) => target.server.listen(0, '127.0.0.1', resolve));
  target.address = `127.0.0.1:${(target.server.address() as AddressInfo).port}`;
  return target;
}

/** A client connection that accumulates what it receives and remembers when it closed. */
interface Client {
  socket: Socket;
  text: () => string;
  closed: () => boolean;
}

function dial(proxy: LinkProxy): Client {
  const socket = connect({ host: '127.0.0.1', port: proxy.port });
  let text = '';
  let closed = false;
  socket.on('data', (chunk) => (text += chunk.toString()));
  socket.on('error', () => undefined);
  socket.on('close', () => (closed = true));
  return { socket, text: () => text, closed: () => closed };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what: string, condition: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

/** Long enough for loopback bytes to arrive if anything forwarded them. */
const QUIET_MS = 150;

describe('LinkProxy', () => {
  let target: Target;
  let proxy: LinkProxy;
  const clients: Client[] = [];
  const open = (): Client => {
    const c = dial(proxy);
    clients.push(c);
    return c;
  };

  beforeEach(async () => {
    target = await startTarget();
    proxy = await LinkProxy.start({ target: target.address });
  });

  afterEach(async () => {
    for (const c of clients.splice(0)) c.socket.destroy();
    await proxy.close();
    for (const s of target.sockets) s.destroy();
    await new Promise<void>((resolve) => target.server.close(() => resolve()));
  });

  it('passes bytes both ways by default', async () => {
    expect(proxy.mode).toEqual({ kind: 'pass' });
    expect(proxy.address).toBe(`127.0.0.1:${proxy.port}`);
    const c = open();
    await until('greeting', () => c.text() === 'hi:');
    c.socket.write('ping');
    await until('echo', () => c.text() === 'hi:ping');
    expect(target.received).toEqual(['ping']);
    expect(proxy.stats()).toEqual({ open: 1, accepted: 1 });
  });

  it('blackhole stops both directions but keeps the connection, and delivers held bytes in order once healed', async () => {
    const c = open();
    await until('greeting', () => c.text() === 'hi:');
    proxy.blackhole();
    c.socket.write('a');
    c.socket.write('b');
    await sleep(QUIET_MS);
    expect(target.received).toEqual(['']);
    expect(c.text()).toBe('hi:');
    expect(c.closed()).toBe(false);

    proxy.pass();
    await until('held bytes echoed', () => c.text() === 'hi:ab');
    expect(target.received).toEqual(['ab']);
  });

  it('blackhole also hides a close by the target until the link heals', async () => {
    const c = open();
    await until('greeting', () => c.text() === 'hi:');
    proxy.blackhole();
    target.sockets[0]?.end();
    await sleep(QUIET_MS);
    expect(c.closed()).toBe(false);
    proxy.pass();
    await until('client sees the close', () => c.closed());
  });

  it('reset closes current connections and refuses new ones until the mode changes', async () => {
    const before = open();
    await until('greeting', () => before.text() === 'hi:');
    proxy.reset();
    await until('existing connection closed', () => before.closed());

    const during = open();
    await until('new connection closed', () => during.closed());
    expect(during.text()).toBe('');
    expect(target.received).toHaveLength(1);

    proxy.pass();
    const after = open();
    await until('greeting after reset ends', () => after.text() === 'hi:');
  });

  it('delay holds every chunk for the given time in each direction, keeping order', async () => {
    proxy.delay(120);
    const c = open();
    const connectedAt = Date.now();
    await until('delayed greeting', () => c.text() === 'hi:');
    expect(Date.now() - connectedAt).toBeGreaterThanOrEqual(110);

    const sentAt = Date.now();
    for (const part of ['1', '2', '3', '4']) c.socket.write(part);
    await until('delayed echo', () => c.text() === 'hi:1234');
    // One delay on the way to the target, another on the way back.
    expect(Date.now() - sentAt).toBeGreaterThanOrEqual(230);
  });

  it('drop-one-direction out stops the dialler\'s bytes while the target\'s still arrive', async () => {
    proxy.dropOneDirection('out');
    const c = open();
    await until('greeting travels in', () => c.text() === 'hi:');
    c.socket.write('lost?');
    await sleep(QUIET_MS);
    expect(target.received).toEqual(['']);
    proxy.pass();
    await until('held bytes reach the target', () => target.received[0] === 'lost?');
  });

  it('drop-one-direction in lets the dialler\'s bytes reach the target but not the answers', async () => {
    const c = open();
    await until('greeting', () => c.text() === 'hi:');
    proxy.dropOneDirection('in');
    c.socket.write('ping');
    await until('target receives', () => target.received[0] === 'ping');
    await sleep(QUIET_MS);
    expect(c.text()).toBe('hi:');
    proxy.pass();
    await until('held answer arrives', () => c.text() === 'hi:ping');
  });

  it('resets the dialler when the target cannot be reached', async () => {
    const down = await LinkProxy.start({ target: '127.0.0.1:1' });
    try {
      const c = dial(down);
      await until('connection to an unreachable target closed', () => c.closed());
      expect(c.text()).toBe('');
    } finally {
      await down.close();
    }
  });

  it('resets a connection whose held bytes exceed the limit', async () => {
    const small = await LinkProxy.start({ target: target.address, maxHeldBytes: 1024 });
    try {
      const c = dial(small);
      await until('greeting', () => c.text() === 'hi:');
      small.blackhole();
      c.socket.write(Buffer.alloc(4096));
      await until('connection reset on overflow', () => c.closed());
      expect(small.stats().open).toBe(0);
    } finally {
      await small.close();
    }
  });

  it('rejects a negative delay', () => {
    expect(() => proxy.delay(-1)).toThrow(/non-negative/);
  });

  it('close stops listening and ends its connections', async () => {
    const c = open();
    await until('greeting', () => c.text() === 'hi:');
    const port = proxy.port;
    await proxy.close();
    await until('connection closed by close()', () => c.closed());
    const refused = connect({ host: '127.0.0.1', port });
    const error = await new Promise<NodeJS.ErrnoException>((resolve) => refused.on('error', resolve));
    expect(error.code).toBe('ECONNREFUSED');
    proxy = await LinkProxy.start({ target: target.address }); // for afterEach
  });
});
