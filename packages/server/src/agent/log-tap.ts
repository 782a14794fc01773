// Where /v1/agent/monitor gets its lines: the logger's destination, copied to the agent's stderr and
// to every attached monitor whose level the line meets (Consul's logWriter handlers). A monitor
// sees only what the agent logs at all, so a level below the agent's `log_level` shows the agent's
// level and up (docs/agent-lifecycle.md). A slow monitor drops lines rather than hold the logger.

/** Consul's level names, lowest first, and the spellings that mean the same. */
const RANK: Record<string, number> = { trace: 0, debug: 1, info: 2, warn: 3, warning: 3, err: 4, error: 4, fatal: 5 };

export function monitorLevelRank(level: string): number | undefined {
  return RANK[level.toLowerCase()];
}

type Listener = (line: string) => void;

export class LogTap {
  private readonly listeners = new Map<Listener, number>();

  constructor(private readonly out: NodeJS.WritableStream = process.stderr) {}

  /** The logger writes here (createLogger's destination). */
  readonly destination = {
    write: (line: string): boolean => {
      const ok = this.out.write(line);
      if (this.listeners.size > 0) {
        const rank = lineRank(line);
        for (const [listener, min] of this.listeners) if (rank >= min) listener(line);
      }
      return ok;
    },
  } as unknown as NodeJS.WritableStream;

  /** Call `listener` with each line at `minRank` or above until the returned function is called. */
  attach(minRank: number, listener: Listener): () => void {
    this.listeners.set(listener, minRank);
    return () => void this.listeners.delete(listener);
  }
}

/** The level of a text line (`… [INFO]  …`) or a JSON line (`"@level":"info"`). */
function lineRank(line: string): number {
  const text = /^\S+ \[([A-Z]+)\]/.exec(line);
  const name = text ? text[1]! : /"@level":"([a-z]+)"/.exec(line)?.[1];
  return (name ? RANK[name.toLowerCase()] : undefined) ?? RANK.info!;
}
