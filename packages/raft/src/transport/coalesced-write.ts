// Many small frames written in one turn of the event loop go out as one writev: the socket
// is corked at the first write and uncorked on the next tick. A frame in parts (a bulk byte field
// left uncopied, frame-codec.ts) goes out the same way, its parts back to back. A sender that has
// nothing more to add this turn flushes at once (flushCoalesced): a tick queued from inside a
// promise chain runs only once the whole chain has run, and a follower's answer would wait for the
// apply that follows it in the same Ready.
import type { Socket } from 'node:net';
import type { EncodedFrame } from './frame-codec';

/** Sockets corked this turn (each leaves the set when uncorked). */
const corked = new Set<Socket>();

export function writeCoalesced(socket: Socket, frame: EncodedFrame): void {
  if (!corked.has(socket)) {
    corked.add(socket);
    socket.cork();
    process.nextTick(() => uncork(socket));
  }
  if (Buffer.isBuffer(frame)) socket.write(frame);
  else for (const part of frame) socket.write(part);
}

/** Writes out now what every corked socket holds (its queued tick then finds nothing to do). */
export function flushCoalesced(): void {
  for (const socket of corked) uncork(socket);
}

function uncork(socket: Socket): void {
  if (!corked.delete(socket)) return;
  socket.uncork();
}
