// Which way the write-ahead log wrote (issue #30, #34): on the event loop (writevSync, writeSync) or
// through libuv's pool (writev, write). A record is one writev of its header and body. Spied on the
// module object itself (an `import *` would be a copy whose spies the log never sees).
import fs = require('node:fs');

/** How many of `write`'s syscalls were made on the event loop and through the pool. */
export async function writesBy(write: () => Promise<void>): Promise<{ inline: number; pool: number }> {
  const inline = [jest.spyOn(fs, 'writevSync'), jest.spyOn(fs, 'writeSync')];
  const pool = [jest.spyOn(fs, 'writev'), jest.spyOn(fs, 'write')];
  const calls = (spies: jest.SpyInstance[]) => spies.reduce((n, s) => n + s.mock.calls.length, 0);
  try {
    await write();
    return { inline: calls(inline), pool: calls(pool) };
  } finally {
    for (const s of [...inline, ...pool]) s.mockRestore();
  }
}
