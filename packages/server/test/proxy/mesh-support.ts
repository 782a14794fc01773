// Shared pieces of the proxy tests: TCP echo servers, `registry connect proxy` processes (the built
// CLI, killed by their own PIDs), and one round trip through a port.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { CLI } from '../support/processes';
import { freePorts } from '../support/ports';

export interface EchoServer extends Server {
  /** Connections it has accepted. */
  accepted: number;
  /** Bytes it has read, over all connections. */
  received: number;
}

export async function echoServer(port: number, prefix = ''): Promise<EchoServer> {
  const srv: EchoServer = Object.assign(createServer((s) => {
    srv.accepted++;
    s.on('error', () => undefined);
    s.on('data', (d) => {
      srv.received += d.length;
      s.write(prefix + d.toString());
    });
  }), { accepted: 0, received: 0 });
  await new Promise<void>((r) => srv.listen(port, '127.0.0.1', () => r()));
  return srv;
}

export interface ProxyProcess {
  child: ChildProcess;
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

export function spawnProxy(args: string[], logFile: string, env: Record<string, string> = {}): ProxyProcess {
  const child = spawn(process.execPath, [CLI, 'connect', 'proxy', '-log-level', 'debug', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  const log = createWriteStream(logFile, { flags: 'a' });
  // Two streams into one file: neither may end it (the first to end would make the other's next
  // line a 'write after end' error, uncaught, failing whichever test is running); closed at exit.
  child.stdout!.pipe(log, { end: false });
  child.stderr!.pipe(log, { end: false });
  child.on('close', () => log.end());
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return {
    child,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

/** An open connection to `port` that answers each line it is sent (null: the proxy closed it). */
export async function openConn(port: number): Promise<Socket> {
  const s = connect({ host: '127.0.0.1', port });
  s.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    s.once('connect', () => resolve());
    s.once('error', reject);
  });
  return s;
}

/**
 * Send `msg` and wait for the answer (until `complete` says it is whole: by default as long as the
 * message); null when the connection is closed first (or nothing in `ms`).
 */
export function ask(s: Socket, msg: string, ms = 5000, complete = (got: string) => got.length >= msg.length): Promise<string | null> {
  return new Promise((resolve) => {
    let got = '';
    const done = (v: string | null) => {
      clearTimeout(timer);
      s.off('data', onData);
      s.off('close', onClose);
      resolve(v);
    };
    const onData = (d: Buffer) => {
      got += d.toString();
      if (complete(got)) done(got);
    };
    const onClose = () => done(null);
    const timer = setTimeout(() => done(null), ms);
    s.on('data', onData);
    s.on('close', onClose);
    if (s.destroyed) return done(null);
    s.write(msg);
  });
}

/** One new connection, one message: its answer, or null when refused. */
export async function roundTrip(port: number, msg: string, ms = 5000): Promise<string | null> {
  let s: Socket;
  try {
    s = await openConn(port);
  } catch {
    return null;
  }
  try {
    return await ask(s, msg, ms);
  } finally {
    s.destroy();
  }
}

/** Two consecutive free ports (the managed proxies' range), checked by binding them. */
export async function freeRange(): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const [p] = await freePorts(1);
    const ok = await new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(false));
      s.listen(p! + 1, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (ok) return p!;
  }
  throw new Error('no two consecutive free ports');
}
