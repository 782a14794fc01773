// A restore's archive as it arrives over HTTP goes to a file in the data dir, not to memory: it may
// be hundreds of MiB, and until it has been read and checked nothing of it is worth keeping. The
// file is written as the bytes come (with back-pressure), refused once it passes the configured
// limit (`snapshot_restore_max_bytes`), and always removed by whoever made it. Files left by a
// server that died mid-upload are removed at its next start (scratch-dirs.ts).
import { createWriteStream } from 'node:fs';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { badRequest, tooLarge } from '../errors';
import { UPLOAD_DIR, scratchFile } from './scratch-dirs';

export interface Upload {
  path: string;
  bytes: number;
  /** Removes the file (idempotent; never throws). */
  remove(): Promise<void>;
}

/**
 * Writes `body` to a new file under `<dataDir>/snapshot-uploads`. Rejects with a TooLarge error
 * (413) as soon as more than `maxBytes` arrived (or Content-Length says so: nothing is read then),
 * with a BadRequest when the client stops half-way; the file is removed on any failure.
 */
export async function receiveUpload(body: Readable, dataDir: string, maxBytes: number, declaredLength: number | null): Promise<Upload> {
  const limitMessage = `snapshot archive is larger than ${maxBytes} bytes (snapshot_restore_max_bytes)`;
  if (declaredLength !== null && declaredLength > maxBytes) throw tooLarge(limitMessage);
  const { path, remove } = await scratchFile(dataDir, UPLOAD_DIR, 'restore', '.tgz');
  let bytes = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      bytes += chunk.length;
      if (bytes > maxBytes) done(tooLarge(limitMessage));
      else done(null, chunk);
    },
  });
  // Not pipeline(body, …): on a refusal it would destroy the request, and with it the socket the
  // answer (413) must still go out on. The request is only unpiped; the edge closes the connection
  // after the answer (app.ts, streamBody).
  const ended = () => counter.destroy(badRequest('snapshot archive upload ended before the whole body arrived'));
  const onClose = () => {
    if (!(body as Readable & { complete?: boolean }).complete) ended();
  };
  body.once('aborted', ended);
  body.once('error', ended);
  body.once('close', onClose);
  const written = pipeline(counter, createWriteStream(path, { flags: 'wx' }));
  body.pipe(counter);
  try {
    await written;
  } catch (err) {
    await remove();
    throw err;
  } finally {
    body.unpipe(counter);
    body.off('aborted', ended);
    body.off('error', ended);
    body.off('close', onClose);
  }
  if (declaredLength !== null && bytes !== declaredLength) {
    await remove();
    throw badRequest(`snapshot archive upload has ${bytes} bytes, Content-Length said ${declaredLength}`);
  }
  return { path, bytes, remove };
}
