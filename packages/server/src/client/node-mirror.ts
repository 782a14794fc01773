// A client agent keeps no replicated state, but its local state (local/: the services' and checks'
// listings, maintenance, anti-entropy's catalog view) reads its own node's catalog rows from a
// Store, as it does on a server. The mirror is a local, unreplicated Store holding only this node, copied from the
// servers' answer at each anti-entropy pass and after each write the agent makes through it.
import { Store, type Command, type RegisterRequest } from '@registry/store';
import type { NodeView } from '../local/anti-entropy';
import { defaultQueryOptions } from '../rpc/query-options';
import type { RpcApi } from '../rpc/rpc-api';

export class NodeMirror {
  readonly store: Store;
  private index = 0;
  private last = '';

  constructor(
    private readonly rpc: RpcApi,
    private readonly node: string,
    private readonly datacenter: string,
    /** The agent token (read per refresh): with ACLs on, the servers filter the node's rows by it. */
    private readonly token: () => string | undefined = () => undefined,
  ) {
    this.store = new Store({ datacenter });
  }

  /** Read this node from the servers (the leader's view) and copy it here when it changed. */
  async refresh(): Promise<NodeView> {
    const opts = defaultQueryOptions(this.datacenter, this.token());
    const [node, checks] = await Promise.all([
      this.rpc.read('catalog.node', { node: this.node }, opts),
      this.rpc.read('health.node', { node: this.node }, opts),
    ]);
    const view: NodeView = { node: node.result.value, checks: checks.result.value };
    this.copy(view);
    return view;
  }

  private copy(view: NodeView): void {
    const text = JSON.stringify(view);
    if (text === this.last) return;
    this.last = text;
    this.apply({ type: 'catalog.deregister', req: { Node: this.node } });
    const n = view.node?.Node;
    if (!n) return;
    const base: RegisterRequest = { ID: n.ID, Node: n.Node, Address: n.Address, TaggedAddresses: n.TaggedAddresses, NodeMeta: n.Meta };
    this.apply({ type: 'catalog.register', req: base });
    for (const s of Object.values(view.node!.Services)) {
      const service = {
        ID: s.ID, Service: s.Service, Tags: s.Tags, Address: s.Address, Meta: s.Meta, Port: s.Port, Weights: s.Weights,
        EnableTagOverride: s.EnableTagOverride, ...(s.Kind ? { Kind: s.Kind, Proxy: s.Proxy as never } : {}),
      };
      this.apply({ type: 'catalog.register', req: { Node: n.Node, SkipNodeUpdate: true, Service: service } });
    }
    for (const c of view.checks) {
      const check = { CheckID: c.CheckID, Name: c.Name, Status: c.Status, Notes: c.Notes, Output: c.Output, ServiceID: c.ServiceID, Definition: c.Definition as never };
      this.apply({ type: 'catalog.register', req: { Node: n.Node, SkipNodeUpdate: true, Check: check } });
    }
  }

  /** Best effort: a row the local store refuses is left out of the mirror (the servers hold the truth). */
  private apply(cmd: Command): void {
    this.index = Math.max(this.index, this.store.lastIndex) + 1;
    this.store.apply(this.index, cmd); // a CommandError here only means that row is not mirrored
  }
}
