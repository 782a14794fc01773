// The server port's bounds as the config sets them (limits.rpc_*; the mechanism is
// raft/src/transport/inbound-limits.ts), and what becomes of a refusal: a metric by reason
// (registry_rpc_refused_total) and a warning at most every 10 s with the counts since the last one,
// so that a flood of connections does not flood the log as well.
import type { InboundLimits, InboundObserver, InboundRefusal } from '@registry/raft';
import type { RpcLimitsConfig } from '../config/config';
import { descriptorShares } from '../limits/descriptor-budget';
import { monotonicMs } from '../time';

const LOG_EVERY_MS = 10_000;

interface RefusalLog {
  warn(o: object, msg: string): void;
}

/** The transport's limits: configured values, else the port's share of the descriptor limit. */
export function serverPortLimits(config: RpcLimitsConfig, nofile?: number): Partial<InboundLimits> {
  return {
    maxConns: config.maxConns ?? descriptorShares(nofile).rpc,
    maxConnsPerClient: config.maxConnsPerClient,
    handshakeTimeoutMs: config.handshakeTimeoutMs,
    idleTimeoutMs: config.idleTimeoutMs,
  };
}

export class ServerPortRefusals implements InboundObserver {
  private readonly counts = new Map<InboundRefusal, number>();
  private last: { reason: InboundRefusal; remote: string; detail: string } | null = null;
  private lastLog = -Infinity; // monotonic ms: the first refusal is logged at once

  constructor(
    private readonly logger: RefusalLog,
    private readonly count: (reason: InboundRefusal) => void,
  ) {}

  refused(reason: InboundRefusal, remote: string, detail: string): void {
    this.count(reason);
    this.counts.set(reason, (this.counts.get(reason) ?? 0) + 1);
    this.last = { reason, remote, detail };
    const now = monotonicMs();
    if (now - this.lastLog < LOG_EVERY_MS) return;
    this.lastLog = now;
    this.logger.warn({ refused: Object.fromEntries(this.counts), last: this.last }, 'server port: refusing connections or frames');
    this.counts.clear();
  }
}
