// What a RaftNode reports while its storage fails (a full disk, no file descriptors left, I/O
// errors), the error its callers get meanwhile, and the retry schedule.

/**
 * A storage fault, as `RaftNode.storageFault()` reports it.
 *  - kind 'log': writing a Ready batch (hard state, entries, an installed snapshot) failed. The node
 *    takes no part in Raft until the same write succeeds: it drops incoming messages, sends
 *    nothing, stops its election/heartbeat clock, refuses proposals and reads and does not count as
 *    leader. The write is retried with backoff (100 ms doubling to 2 s).
 *  - kind 'snapshot': only a background snapshot failed to be written. The node still takes part;
 *    it cannot compact its log until a retry (1 s doubling to 10 s) succeeds.
 */
export interface StorageFault {
  kind: 'log' | 'snapshot';
  /** "raft storage failed: <cause>", the cause being the first failure of this fault. */
  message: string;
  /** monotonicMs() of that first failure. */
  since: number;
  /** Failed retries since. */
  retries: number;
  /** The cause of the latest failure (it may differ from the first). */
  lastError: string;
  /** monotonicMs() at which the next retry is due. */
  nextRetryAt: number;
}

/** What 'storage-recovered' carries: the fault that just ended. */
export interface StorageRecovery {
  kind: StorageFault['kind'];
  message: string;
  since: number;
  retries: number;
  /** How long the fault lasted, in ms. */
  downMs: number;
}

/** Proposals, reads and membership changes refused or abandoned because this server's storage fails. */
export class StorageFaultError extends Error {
  constructor(
    message: string,
    /** True for a proposal already handed to Raft: it may still commit through another server. */
    readonly outcomeUnknown = false,
  ) {
    super(outcomeUnknown ? `${message} (the command may still be committed by another server)` : message);
    this.name = 'StorageFaultError';
  }
}

/** Retry delays: `first` ms, doubling, at most `max` ms. */
export class Backoff {
  private next: number;
  constructor(
    private readonly first: number,
    private readonly max: number,
  ) {
    this.next = first;
  }

  take(): number {
    const delay = this.next;
    this.next = Math.min(this.max, this.next * 2);
    return delay;
  }

  reset(): void {
    this.next = this.first;
  }
}

/** strerror texts LevelDB puts into its messages, by errno name. */
const ERRNO_TEXTS: [code: string, text: string][] = [
  ['ENOSPC', 'No space left on device'],
  ['EMFILE', 'Too many open files'],
  ['ENFILE', 'Too many open files in system'],
  ['EDQUOT', 'Disk quota exceeded'],
  ['EROFS', 'Read-only file system'],
  ['EIO', 'Input/output error'],
  ['EACCES', 'Permission denied'],
];

/**
 * One line naming the cause, errno first when there is one: Node's own errors ("ENOSPC: no space
 * left on device, write") keep their shape with strerror's capitals; LevelDB's ("IO error: …/000003.log: No space left
 * on device", possibly as the cause of "Database failed to open") get the errno name in front.
 */
export function describeStorageError(err: unknown): string {
  const messages: string[] = [];
  let code: string | undefined;
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 4; depth++) {
    // Error-like by shape, not instanceof: an error made in another realm (a vm context, a test
    // sandbox) fails instanceof Error and would lose its code.
    if (typeof e === 'object' && typeof (e as { message?: unknown }).message === 'string') {
      const message = (e as Error).message;
      if (message && !messages.includes(message)) messages.push(message);
      const c = (e as { code?: unknown }).code;
      if (code === undefined && typeof c === 'string' && /^E[A-Z]+$/.test(c)) code = c;
      e = (e as { cause?: unknown }).cause;
    } else {
      messages.push(String(e));
      break;
    }
  }
  const text = messages.join(': ') || 'unknown error';
  if (code === undefined) {
    // Longest text first: "Too many open files in system" before "Too many open files".
    const known = ERRNO_TEXTS.filter(([, t]) => text.includes(t)).sort((a, b) => b[1].length - a[1].length)[0];
    code = known?.[0];
  }
  if (code && text.startsWith(code)) {
    // Node's wording ("ENOSPC: no space left on device, write") in strerror's, as LevelDB words it,
    // so a cause reads the same whichever store met it.
    const canonical = ERRNO_TEXTS.find(([c]) => c === code)?.[1];
    const own = `${code}: ${canonical ?? ''}`;
    return canonical && text.toLowerCase().startsWith(own.toLowerCase()) ? own + text.slice(own.length) : text;
  }
  return code ? `${code}: ${text}` : text;
}
