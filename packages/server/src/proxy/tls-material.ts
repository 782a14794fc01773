// The proxy's TLS identity, kept current from the agent by blocking queries: the CA roots
// (`/v1/agent/connect/ca/roots`) and this service's leaf (`/v1/agent/connect/ca/leaf/:service`).
// Each change builds new options; listeners take them for new connections only, so a rotated leaf
// or a new root never touches a connection already open.
import { createSecureContext, DEFAULT_CIPHERS, type SecureContext } from 'node:tls';
import type { AgentApi } from './agent-api';
import { blockingLoop, type BlockingLoop } from './blocking-loop';

interface RootsAnswer {
  TrustDomain: string;
  ActiveRootID: string;
  Roots: { ID: string; RootCert: string; IntermediateCerts?: string[] | null; Active: boolean }[];
}

interface LeafAnswer {
  SerialNumber: string;
  CertPEM: string;
  PrivateKeyPEM: string;
  ServiceURI: string;
  ModifyIndex: number;
}

export interface TlsIdentity {
  /** Every root the cluster lists (old roots stay while their leaves are valid). */
  ca: string[];
  cert: string;
  key: string;
  trustDomain: string;
  leafSerial: string;
  /**
   * The same, parsed once: handing `ca`/`cert`/`key` to every tls.connect would make OpenSSL parse
   * the certificates again for each connection (most of a new connection's cost, measured).
   */
  context: SecureContext;
}

/**
 * Node's suites with AES-128-GCM first, as Go's crypto/tls (Consul's proxy) orders them on AES
 * hardware: the same security for the mesh's short-lived leaves, and a third less CPU per byte than
 * Node's default AES-256-GCM (measured: bench/connect, docs/benchmarks.md). Servers hold to this order.
 */
export const PROXY_CIPHERS = ['TLS_AES_128_GCM_SHA256', ...DEFAULT_CIPHERS.split(':').filter((c) => c !== 'TLS_AES_128_GCM_SHA256')].join(':');

export class TlsMaterial {
  private roots: RootsAnswer | undefined;
  private leaf: LeafAnswer | undefined;
  private loops: BlockingLoop[] = [];
  private identity: TlsIdentity | undefined;
  private readonly listeners = new Set<(id: TlsIdentity) => void>();

  constructor(
    private readonly api: AgentApi,
    private readonly service: string,
    private readonly log: (msg: string, fields?: Record<string, unknown>) => void,
  ) {}

  /** Resolves once both the roots and the leaf have been fetched (rejects on the first failure). */
  async start(): Promise<void> {
    const leafPath = `/v1/agent/connect/ca/leaf/${encodeURIComponent(this.service)}`;
    const roots = blockingLoop<RootsAnswer>(
      (last, signal) => this.api.block('/v1/agent/connect/ca/roots', {}, { index: last.index }, signal),
      (v) => {
        this.roots = v;
        this.log('CA roots updated', { activeRoot: v.ActiveRootID, roots: v.Roots.length });
        this.changed();
      },
      (err) => this.log('watching CA roots failed', { err: err.message }),
    );
    const leaf = blockingLoop<LeafAnswer>(
      (last, signal) => this.api.block(leafPath, {}, { index: last.index }, signal),
      (v) => {
        this.leaf = v;
        this.log('leaf certificate updated', { serial: v.SerialNumber });
        this.changed();
      },
      (err) => this.log('watching the leaf certificate failed', { err: err.message }),
    );
    this.loops = [roots, leaf];
    await Promise.all([roots.ready, leaf.ready]);
  }

  stop(): void {
    for (const l of this.loops) l.stop();
    this.loops = [];
  }

  /** The current identity (start() must have resolved). */
  current(): TlsIdentity {
    if (this.identity) return this.identity;
    const r = this.roots!;
    const l = this.leaf!;
    const ca = r.Roots.map((x) => x.RootCert);
    this.identity = {
      ca,
      cert: l.CertPEM,
      key: l.PrivateKeyPEM,
      trustDomain: r.TrustDomain,
      leafSerial: l.SerialNumber,
      context: createSecureContext({ ca, cert: l.CertPEM, key: l.PrivateKeyPEM, ciphers: PROXY_CIPHERS }),
    };
    return this.identity;
  }

  onChange(fn: (id: TlsIdentity) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private changed(): void {
    this.identity = undefined;
    if (!this.roots || !this.leaf) return;
    const id = this.current();
    for (const fn of this.listeners) fn(id);
  }
}
