// Many small frames written in one turn of the event loop go out as one writev: the socket
// is corked at the first write and uncorked on the next tick.
import type { Socket } from 'node:net';

const corked = new WeakSet<Socket>();

export function writeCoalesced(socket: Socket, frame: Buffer): void {
  if (!corked.has(socket)) {
    corked.add(socket);
    socket.cork();
    process.nextTick(() => {
      corked.delete(socket);
      socket.uncork();
    });
  }
  socket.write(frame);
}
