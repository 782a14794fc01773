// The leader adds back a server that was removed while alive and has not left (issue #35, finding
// 3), as Consul's leader does: its reconcile loop sees a serf member that is alive, is a server and
// is not in the Raft configuration, and adds it (leader.go handleAliveMember → joinConsulServer).
// Without gossip the members the leader knows of are the servers' catalog nodes (server-health.ts
// keeps them, and keeps a removed server's node, listed as left by /v1/agent/members) and the
// servers its own Raft configurations have held since it started (a server removed before the
// leader of the day had registered its node — a leader removed within a second of its election —
// is in no catalog): each pass pings every such server that is not in the configuration
// (`cluster.info`, with a RemovalNotice, so that it knows it is out: membership.ts) and adds the
// first that answers with the same id and has not left. A server that left (`leave`: it says so
// itself) or was force-left (its serfHealth holds LEFT_OUTPUT: replicated, so a new leader knows
// too) is not added back; it returns through `join`.
import type { RaftNode, Transport } from '@registry/raft';
import { joinHostPort } from '@registry/raft';
import type { Store } from '@registry/store';
import type { Logger } from '../runtime/logger';
import { monotonicMs } from '../time';
import { addServerOnce } from './add-server';
import type { RemovalNotice } from './membership';
import type { InfoReply, ServerFacts } from './server-info';

const PING_TIMEOUT_MS = 800;
/**
 * A removed server is asked on every pass until it has gone unanswered this long: a live server
 * that misses a few pings (paused, or starved on a busy host) is added back within a pass of
 * answering again, not after a backoff that grew while it was slow.
 */
const PATIENT_FOR_MS = 15_000;
/** After that, a removed server that does not answer (most likely dead) is asked again after 2, 4, … up to this many ms. */
const MAX_BACKOFF_MS = 60_000;
/** How long a force-leave keeps a server out before its replicated left mark is certain to be written. */
const KEEP_OUT_MS = 30_000;

export interface ReadmissionDeps {
  self: ServerFacts;
  raft: RaftNode;
  store: Store;
  transport: Transport;
  logger: Logger;
  /** Whether the catalog marks server node `node` as left (force-leave): server-health.ts. */
  markedLeft(node: string): boolean;
}

export class Readmission {
  /** Removed servers that did not answer: since when (monotonic), misses past the patient spell, when to ask next. */
  private readonly unanswered = new Map<string, { since: number; misses: number; nextAt: number }>();
  /** Servers being force-left by this leader, until their left mark is in the catalog (monotonic deadline). */
  private readonly keptOut = new Map<string, number>();

  constructor(private readonly d: ReadmissionDeps) {}

  /** A force-leave under way on this leader: never add `id` back while its left mark is being written. */
  keepOut(id: string): void {
    this.keptOut.set(id, monotonicMs() + KEEP_OUT_MS);
  }

  /** One pass: tell every known removed server that it is out; add back the first one alive that has not left. */
  async pass(): Promise<void> {
    const { raft, store, self } = this.d;
    const members = new Set(raft.configuration().map((s) => s.id));
    const now = monotonicMs();
    for (const [id, until] of this.keptOut) if (until <= now) this.keptOut.delete(id);
    // A server back in the configuration starts afresh should it be removed again.
    for (const id of this.unanswered.keys()) if (members.has(id)) this.unanswered.delete(id);
    // Never this leader itself: one whose own removal is appended but not yet committed steps down once it is.
    const removed = new Map<string, { address: string; node?: string }>();
    for (const s of store.catalogService('registry').value) {
      if (s.ServiceID === 'registry' && s.ID && s.ID !== self.id && !members.has(s.ID) && s.Datacenter === self.datacenter) {
        removed.set(s.ID, { address: joinHostPort(s.Address, s.ServicePort), node: s.Node });
      }
    }
    for (const s of raft.everMembers()) if (s.id !== self.id && !members.has(s.id) && !removed.has(s.id)) removed.set(s.id, { address: s.address });
    const replies = await Promise.all(
      [...removed].map(async ([id, { address, node }]) => {
        const wait = this.unanswered.get(id);
        if (wait && wait.nextAt > now) return null;
        const left = this.keptOut.has(id) || (node !== undefined && this.d.markedLeft(node));
        // Addressed to `id`: another server now at that address (a replacement) ignores it.
        const notice: RemovalNotice = { leader: self.id, term: raft.term(), left, id };
        let reply: InfoReply;
        try {
          reply = (await this.d.transport.call(address, 'cluster.info', { notice }, PING_TIMEOUT_MS)) as InfoReply;
        } catch {
          this.missed(id, wait, now);
          return null;
        }
        // Someone else answers there now: asked less often too, as a server that does not answer.
        if (reply.id !== id) {
          this.missed(id, wait, now);
          return null;
        }
        this.unanswered.delete(id);
        // Known by its configuration only: whether it was force-left is read by the node it names.
        return { id, address, left: left || (node === undefined && this.d.markedLeft(reply.node)), reply };
      }),
    );
    for (const r of replies) {
      if (!r || r.left || r.reply.left || r.reply.datacenter !== self.datacenter) continue;
      // Still a leader of the same term with the server still out (the pings took a while).
      if (!raft.isLeader() || raft.configuration().some((s) => s.id === r.id)) return;
      this.d.logger.info({ id: r.id, node: r.reply.node, address: r.address }, 'adding back a server that was removed while alive and has not left');
      // At the address it was reached at; a non-voter comes back as one. One change per pass.
      await addServerOnce(raft, { id: r.id, address: r.address, ...(r.reply.nonVoter ? { learner: true } : {}) });
      return;
    }
  }

  /** Server `id` did not answer as itself: asked on every pass while the patient spell lasts, then less and less often. */
  private missed(id: string, wait: { since: number; misses: number } | undefined, now: number): void {
    const since = wait?.since ?? now;
    const patient = now - since < PATIENT_FOR_MS;
    const misses = patient ? 0 : (wait?.misses ?? 0) + 1;
    this.unanswered.set(id, { since, misses, nextAt: patient ? 0 : monotonicMs() + Math.min(MAX_BACKOFF_MS, 1_000 * 2 ** misses) });
  }
}
