// Two sockets joined both ways, as Consul's proxy Conn.CopyBytes: bytes flow until either side ends
// or fails, and then both are closed. An end is passed on (pipe ends the other side once its
// buffered bytes are written) rather than cut, so that nothing already read is lost.
import type { Duplex } from 'node:stream';
import type { ConnectionStats } from './connection-stats';

export function splice(a: Duplex, b: Duplex, stats: ConnectionStats): void {
  let done = false;
  const close = () => {
    if (done) return;
    done = true;
    a.destroy();
    b.destroy();
  };
  a.on('data', (c: Buffer) => (stats.bytesIn += c.length));
  b.on('data', (c: Buffer) => (stats.bytesOut += c.length));
  a.pipe(b);
  b.pipe(a);
  for (const s of [a, b]) {
    s.on('error', close);
    s.on('close', close);
  }
}
