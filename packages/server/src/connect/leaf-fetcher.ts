// The agent's leaf certificates as cache entries: the first fetch makes a key and CSR and has a
// server sign it; each refresh waits until the leaf is due for renewal (a random point between 60 %
// and 90 % of its lifetime, so a fleet does not renew at once) or the active root changes, then
// issues a new leaf with a new key.
import { createCSR, serviceURI, type Leaf } from '@registry/ca';
import type { CaRootsOut } from '@registry/store';
import { serverError } from '../errors';
import type { Fetched, Fetcher } from '../cache/agent-cache';
import type { CacheAnswer } from '../cache/cache-answer';
import { CA_NOT_READY } from './leaf-signer';

/** Consul's IssuedCert. */
export interface IssuedCert {
  SerialNumber: string;
  CertPEM: string;
  PrivateKeyPEM: string;
  Service: string;
  ServiceURI: string;
  ValidAfter: string;
  ValidBefore: string;
  CreateIndex: number;
  ModifyIndex: number;
}

export interface LeafFetcherDeps {
  datacenter: string;
  /** The cached roots; with `minIndex`, waits up to `waitMs` for them to change. */
  roots(minIndex: number, waitMs: number, signal: AbortSignal): Promise<CacheAnswer<CaRootsOut>>;
  sign(csrPEM: string): Promise<{ leaf: Leaf; index: number }>;
  now?: () => number;
  random?: () => number;
}

export function renewalTime(leaf: Pick<IssuedCert, 'ValidAfter' | 'ValidBefore'>, random: () => number): number {
  const start = Date.parse(leaf.ValidAfter);
  const end = Date.parse(leaf.ValidBefore);
  return start + (end - start) * (0.6 + 0.3 * random());
}

export function leafFetcher(service: string, deps: LeafFetcherDeps): Fetcher<IssuedCert> {
  const now = deps.now ?? Date.now;
  const random = deps.random ?? Math.random;
  let current: { cert: IssuedCert; rootId: string; rootsIndex: number; renewAt: number } | undefined;

  const issue = async (signal: AbortSignal): Promise<Fetched<IssuedCert>> => {
    const roots = await deps.roots(0, 0, signal);
    if (!roots.value.ActiveRootID) throw serverError(CA_NOT_READY);
    const uri = serviceURI(roots.value.TrustDomain, deps.datacenter, service);
    const { csrPEM, privateKeyPEM } = createCSR({ uri });
    const { leaf, index } = await deps.sign(csrPEM);
    const cert: IssuedCert = {
      SerialNumber: leaf.SerialNumber,
      CertPEM: leaf.CertPEM,
      PrivateKeyPEM: privateKeyPEM,
      Service: leaf.Service,
      ServiceURI: leaf.ServiceURI,
      ValidAfter: leaf.ValidAfter,
      ValidBefore: leaf.ValidBefore,
      CreateIndex: index,
      ModifyIndex: index,
    };
    current = { cert, rootId: roots.value.ActiveRootID, rootsIndex: roots.index ?? 0, renewAt: renewalTime(cert, random) };
    // The leader just signed it: the roots read's leader metadata stands for the fetch.
    return { index, value: cert, meta: roots.meta };
  };

  return async (_minIndex, signal) => {
    while (current && !signal.aborted) {
      const remaining = current.renewAt - now();
      if (remaining <= 0) break;
      const roots = await deps.roots(current.rootsIndex, remaining, signal);
      if (roots.value.ActiveRootID !== current.rootId) break;
      current.rootsIndex = roots.index ?? 0;
    }
    if (signal.aborted && current) return { index: current.cert.ModifyIndex, value: current.cert };
    return issue(signal);
  };
}
