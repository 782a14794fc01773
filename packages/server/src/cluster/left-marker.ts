// A server that did `registry leave` remembers it in its data dir. The leader stops replicating to
// a server as soon as it proposes its removal, so the leaver usually never sees the configuration
// without itself: restarted, its own log would still name it a voter. The marker tells the joiner
// it is out of the cluster and must join again; it is removed once the cluster took it back.
import { existsSync, rmSync } from 'node:fs';
import { writeFileDurablySync } from '../runtime/durable-file';
import { join } from 'node:path';

export class LeftMarker {
  private readonly path: string;

  constructor(dataDir: string) {
    this.path = join(dataDir, 'left');
  }

  has(): boolean {
    return existsSync(this.path);
  }

  mark(): void {
    // Durably: a power cut right after `leave` must not bring the server back believing it is a member.
    writeFileDurablySync(this.path, `${new Date().toISOString()}\n`, 0o644);
  }

  clear(): void {
    rmSync(this.path, { force: true });
  }
}
