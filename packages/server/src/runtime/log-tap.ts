// Where /v1/agent/monitor gets its lines: the logger's destination, copied to the agent's stderr and
// to every attached monitor whose level the line meets (Consul's logWriter handlers). A monitor
// sees only what the agent logs at all, so a level below the agent's `log_level` shows the agent's
// level and up (docs/agent-lifecycle.md). A slow monitor drops lines rather than hold the logger.
// The last RECENT_LINES lines are kept and replayed to a new monitor first, as Consul's logWriter
// (512 lines) does: `registry monitor` on an idle agent shows at once what it last said (issue #29).

/** Consul's level names, lowest first, and the spellings that mean the same. */
const RANK: Record<string, number> = { trace: 0, debug: 1, info: 2, warn: 3, warning: 3, err: 4, error: 4, fatal: 5 };

export function monitorLevelRank(level: string): number | undefined {
  return RANK[level.toLowerCase()];
}

type Listener = (line: string) => void;

/** Lines kept for a new monitor (Consul's logWriter buffer). */
export const RECENT_LINES = 512;

export class LogTap {
  private readonly listeners = new Map<Listener, number>();
  /** A ring of the last RECENT_LINES lines with their ranks; `next` is the oldest slot once full. */
  private readonly recent: Array<{ line: string; rank: number }> = [];
  private next = 0;

  constructor(private readonly out: NodeJS.WritableStream = process.stderr) {}

  /** The logger writes here (createLogger's destination). */
  readonly destination = {
    write: (line: string): boolean => {
      const ok = this.out.write(line);
      const rank = lineRank(line);
      this.remember(line, rank);
      for (const [listener, min] of this.listeners) if (rank >= min) listener(line);
      return ok;
    },
  } as unknown as NodeJS.WritableStream;

  /**
   * Call `listener` with the recent lines at `minRank` or above, oldest first, then with each new
   * one until the returned function is called.
   */
  attach(minRank: number, listener: Listener): () => void {
    const full = this.recent.length === RECENT_LINES;
    for (let i = 0; i < this.recent.length; i++) {
      const { line, rank } = this.recent[full ? (this.next + i) % RECENT_LINES : i]!;
      if (rank >= minRank) listener(line);
    }
    this.listeners.set(listener, minRank);
    return () => void this.listeners.delete(listener);
  }

  private remember(line: string, rank: number): void {
    if (this.recent.length < RECENT_LINES) this.recent.push({ line, rank });
    else {
      this.recent[this.next] = { line, rank };
      this.next = (this.next + 1) % RECENT_LINES;
    }
  }
}

/** The level of a text line (`… [INFO]  …`) or a JSON line (`"@level":"info"`). */
function lineRank(line: string): number {
  const text = /^\S+ \[([A-Z]+)\]/.exec(line);
  const name = text ? text[1]! : /"@level":"([a-z]+)"/.exec(line)?.[1];
  return (name ? RANK[name.toLowerCase()] : undefined) ?? RANK.info!;
}
