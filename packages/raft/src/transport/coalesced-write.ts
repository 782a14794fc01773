// Many small frames written in one turn of the event loop go out as one writev: the socket
// is corked at the first write and uncorked on the next tick. A frame in parts (a bulk byte field
// left uncopied, frame-codec.ts) goes out the same way, its parts back to back.
import type { Socket } from 'node:net';
import type { EncodedFrame } from './frame-codec';

const corked = new WeakSet<Socket>();

export function writeCoalesced(socket: Socket, frame: EncodedFrame): void {
  if (!corked.has(socket)) {
    corked.add(socket);
    socket.cork();
    process.nextTick(() => {
      corked.delete(socket);
      socket.uncork();
    });
  }
  if (Buffer.isBuffer(frame)) socket.write(frame);
  else for (const part of frame) socket.write(part);
}
