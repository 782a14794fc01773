// The connections a proxy listener accepted and that have not closed yet, so that stopping the
// listener can drop them too. Shared by the public (inbound mTLS) and upstream (local) listeners.
import type { Socket } from 'node:net';

export class OpenSockets {
  private readonly open = new Set<Socket>();

  /**
   * Hold an accepted connection: paused (nothing is read before it is allowed and its other end is
   * up), without Nagle's delay, tracked until it closes; its errors end it through 'close'.
   */
  take(socket: Socket): void {
    socket.pause();
    socket.setNoDelay(true);
    this.open.add(socket);
    socket.on('close', () => this.open.delete(socket));
    socket.on('error', () => undefined);
  }

  destroyAll(): void {
    for (const s of this.open) s.destroy();
  }
}
