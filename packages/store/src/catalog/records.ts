// The catalog's stored rows. Rows are replaced, never mutated in place, and never handed out:
// views.ts copies them into the output shapes.
import type { CheckDefinitionOut, ConnectOut, ProxyOut, Weights } from './outputs';

export interface RaftIndexes {
  readonly CreateIndex: number;
  readonly ModifyIndex: number;
}

export interface NodeData {
  readonly ID: string;
  readonly Node: string;
  readonly Address: string;
  readonly Datacenter: string;
  readonly TaggedAddresses: Readonly<Record<string, string>> | null;
  readonly Meta: Readonly<Record<string, string>> | null;
}

export interface ServiceData {
  /** Folded name of the node the instance lives on. */
  readonly nodeKey: string;
  readonly Kind: string;
  readonly ID: string;
  readonly Service: string;
  readonly Tags: readonly string[];
  readonly Address: string;
  readonly Meta: Readonly<Record<string, string>>;
  readonly Port: number;
  readonly Weights: Readonly<Weights>;
  readonly EnableTagOverride: boolean;
  readonly Proxy: Readonly<ProxyOut>;
  readonly Connect: Readonly<ConnectOut>;
}

export interface CheckData {
  readonly nodeKey: string;
  readonly CheckID: string;
  readonly Name: string;
  readonly Status: string;
  readonly Notes: string;
  readonly Output: string;
  /**
   * Folded ID of the service the check belongs to, "" for a node-level check. ServiceID, ServiceName
   * and ServiceTags are read from that service when the check is shown, so they can never go stale.
   */
  readonly serviceKey: string;
  readonly Definition: Readonly<CheckDefinitionOut>;
}

export type NodeRecord = NodeData & RaftIndexes;
export type ServiceRecord = ServiceData & RaftIndexes;
export type CheckRecord = CheckData & RaftIndexes;
