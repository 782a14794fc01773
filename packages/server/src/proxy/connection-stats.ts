// What a proxy counts about its connections, per listener with Consul 1.4's labels (its proxy's
// metrics: `inbound` {dst}, `upstream` {src, dst_type, dst}): open connections, connections
// accepted, refused by intention, errors, and bytes received from / sent to the listener's clients.
// Reported to the agent (managed proxies) or served by the proxy itself (proxy-metrics.ts), and
// logged each minute that saw traffic and at shutdown.

import type { ListenerCounts, ListenerKind } from '../metrics/proxy-counts';

export type { ListenerCounts, ListenerKind };

export class ConnectionStats {
  /** Connections open now (spliced and not yet closed on both sides). */
  conns = 0;
  accepted = 0;
  refused = 0;
  errors = 0;
  /** Bytes read from the listener's clients. */
  rxBytes = 0;
  /** Bytes written to the listener's clients. */
  txBytes = 0;

  constructor(
    readonly kind: ListenerKind,
    readonly labels: Record<string, string>,
  ) {}

  counts(): ListenerCounts {
    return { kind: this.kind, labels: this.labels, conns: this.conns, accepted: this.accepted, refused: this.refused, errors: this.errors, rx_bytes: this.rxBytes, tx_bytes: this.txBytes };
  }
}

/**
 * Every listener's counts of one proxy. A listener's counts outlive the listener (a configuration
 * change that rebuilds it continues them), so counters never go back.
 */
export class ProxyStats {
  private readonly byKey = new Map<string, ConnectionStats>();

  inbound(service: string): ConnectionStats {
    return this.of('inbound', { dst: service });
  }

  upstream(service: string, destinationType: string, destination: string): ConnectionStats {
    return this.of('upstream', { src: service, dst_type: destinationType, dst: destination });
  }

  all(): ListenerCounts[] {
    return [...this.byKey.values()].map((s) => s.counts());
  }

  /** The totals the log lines carry. */
  totals(): Record<string, number> {
    const t = { accepted: 0, refused: 0, errors: 0, outbound: 0, bytesIn: 0, bytesOut: 0 };
    for (const s of this.byKey.values()) {
      if (s.kind === 'inbound') t.accepted += s.accepted;
      else t.outbound += s.accepted;
      t.refused += s.refused;
      t.errors += s.errors;
      t.bytesIn += s.rxBytes;
      t.bytesOut += s.txBytes;
    }
    return t;
  }

  private of(kind: ListenerKind, labels: Record<string, string>): ConnectionStats {
    const key = `${kind}\u0001${Object.values(labels).join('\u0001')}`;
    let s = this.byKey.get(key);
    if (!s) {
      s = new ConnectionStats(kind, labels);
      this.byKey.set(key, s);
    }
    return s;
  }
}
