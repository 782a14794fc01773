// Two sockets joined both ways, as Consul's proxy Conn.CopyBytes: bytes flow until either side ends
// or fails, and then both are closed. An end is passed on (pipe ends the other side once its
// buffered bytes are written) rather than cut, so that nothing already read is lost: a side that
// closed makes the other end gracefully, and only an error, or a peer that does not close within
// LINGER_MS of that end, destroys it.
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
  const destroyBoth = () => {
    a.destroy();
    b.destroy();
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
  a.on('error', destroyBoth);
  b.on('error', destroyBoth);
  a.on('close', closed(b));
  b.on('close', closed(a));
  a.once('close', gone);
  b.once('close', gone);
}
