// Two sockets joined both ways, as Consul's proxy Conn.CopyBytes: bytes flow until either side ends
// or fails, and then both are closed. An end is passed on (pipe ends the other side once its
// buffered bytes are written) rather than cut, so that nothing already read is lost: a side that
// closed makes the other end gracefully, and only a peer that does not close within LINGER_MS of
// that end is destroyed. An error ends only the side it came from, the same way: what the other
// side holds was read before the failure and is still owed to its peer (Go's io.Copy has written
// it by the time Consul's proxy closes both; here it may still sit in the stream's buffer).
// Destroying both dropped it: a client that wrote 4 MiB and closed at once, under load, sometimes
// saw part of it never reach the service (proxy-traffic.test.ts, in CI).
import type { Duplex } from 'node:stream';
import type { ConnectionStats } from './connection-stats';

const LINGER_MS = 10_000;

/** `a` is the side the listener accepted: its bytes are the listener's rx, those written to it tx. */
export function splice(a: Duplex, b: Duplex, stats: ConnectionStats): void {
  stats.conns++;
  let open = 2;
  const gone = () => {
    if (--open === 0) stats.conns--;
  };
  const closed = (other: Duplex) => () => {
    if (other.destroyed) return;
    other.end();
    setTimeout(() => other.destroy(), LINGER_MS).unref();
  };
  a.on('data', (c: Buffer) => (stats.rxBytes += c.length));
  b.on('data', (c: Buffer) => (stats.txBytes += c.length));
  a.pipe(b);
  b.pipe(a);
  // The failed side closes ('close' follows the error), which ends the other one as above.
  a.on('error', () => a.destroy());
  b.on('error', () => b.destroy());
  a.on('close', closed(b));
  b.on('close', closed(a));
  a.once('close', gone);
  b.once('close', gone);
}
