// Stable one-line textual forms of what a RaftCore emits, for the interaction
// tests' expected outputs. Positions are written term/index as in etcd-io/raft's
// testdata ("2/3" = index 3, written in term 2). Only public data is printed, so
// the core's internals can be reshaped without touching a single expected output.
// The leader's send stamps (`seq`, echoed by answers) are left out: they number
// every append, heartbeat and snapshot, and would only add noise to each line.
import { decodeConfiguration, learnerIds, voterIds } from '../../src/core/configuration';
import type { CoreStatus } from '../../src/core/raft-core';
import { EntryType, type Configuration, type Entry, type HardState, type Message, type Ready, type SoftState } from '../../src/core/types';

const utf8 = new TextDecoder();

/** `voters=[1 2 3]`, followed by ` learners=[4 5]` when there are learners (older files stay unchanged). */
export function voters(configuration: Configuration): string {
  const learners = learnerIds(configuration);
  return `voters=[${voterIds(configuration).join(' ')}]` + (learners.length > 0 ? ` learners=[${learners.join(' ')}]` : '');
}

export function formatEntry(e: Entry): string {
  const at = `${e.term}/${e.index}`;
  switch (e.type) {
    case EntryType.Noop:
      return `${at} Noop`;
    case EntryType.Config:
      return `${at} Config ${voters(decodeConfiguration(e.data))}`;
    default:
      return `${at} Normal ${JSON.stringify(utf8.decode(e.data))}`;
  }
}

export function formatMessage(m: Message): string {
  const head = `${m.from}->${m.to} ${m.type} term=${m.term}`;
  switch (m.type) {
    case 'prevote':
    case 'vote':
      return `${head} last=${m.lastTerm}/${m.lastIndex}${m.type === 'vote' && m.transfer ? ' transfer' : ''}`;
    case 'prevoteResp':
    case 'voteResp':
      return `${head} ${m.granted ? 'granted' : 'rejected'}`;
    case 'append':
      return `${head} prev=${m.prevTerm}/${m.prevIndex} commit=${m.commit} entries=[${m.entries.map(formatEntry).join(', ')}]`;
    case 'appendResp': {
      // On a rejection matchIndex carries the rejected prevIndex; last= is the follower's last
      // index (shown on a success only when it differs from match).
      const last = m.lastIndex !== undefined ? ` last=${m.lastIndex}` : '';
      if (!m.success) return `${head} reject prev=${m.matchIndex} hint=${m.hint}${last}`;
      return `${head} match=${m.matchIndex}${m.lastIndex !== m.matchIndex ? last : ''}`;
    }
    case 'heartbeat':
      return `${head} commit=${m.commit}${m.ctx !== undefined ? ` ctx=${m.ctx}` : ''}`;
    case 'heartbeatResp':
      return `${head}${m.ctx !== undefined ? ` ctx=${m.ctx}` : ''}${m.lastIndex !== undefined ? ` last=${m.lastIndex}` : ''}`;
    case 'snapshot':
      return `${head} snap=${m.meta.term}/${m.meta.index} ${voters(m.meta.configuration)}`;
    case 'timeoutNow':
      return head;
    case 'readIndex':
      return `${head} ctx=${m.ctx}`;
    case 'readIndexResp':
      return `${head} ctx=${m.ctx} index=${m.index}`;
  }
}

export function formatSoftState(s: SoftState): string {
  return `role=${s.role} term=${s.term} leader=${s.leader ?? 'none'}`;
}

export function formatHardState(h: HardState): string {
  return `term=${h.term} vote=${h.vote ?? 'none'} commit=${h.commit}`;
}

/** A Ready as an indented list of its non-empty parts, in the order the driver handles them. */
export function formatReady(rd: Ready): string[] {
  const lines: string[] = [];
  const list = (title: string, items: string[]) => {
    if (items.length === 0) return;
    lines.push(`${title}:`);
    for (const item of items) lines.push(`  ${item}`);
  };
  if (rd.softState) lines.push(`SoftState ${formatSoftState(rd.softState)}`);
  if (rd.hardState) lines.push(`HardState ${formatHardState(rd.hardState)}`);
  if (rd.snapshot) {
    const meta = rd.snapshot.meta;
    lines.push(`Snapshot ${meta.term}/${meta.index} ${voters(meta.configuration)}`);
  }
  list('Entries', rd.entries.map(formatEntry));
  list('Messages', rd.messages.map(formatMessage));
  list('Committed', rd.committed.map(formatEntry));
  list('ReadStates', rd.readStates.map((r) => `ctx=${r.ctx} index=${r.index}`));
  if (rd.failedReads.length > 0) lines.push(`FailedReads: ${rd.failedReads.join(' ')}`);
  return lines;
}

/** "1: leader term=2 leader=1 commit=3 applied=3 last=3", then the leader's view of every follower. */
export function formatStatus(s: CoreStatus): string[] {
  const lines = [
    `${s.id}: ${s.role} term=${s.term} leader=${s.leader ?? 'none'} commit=${s.commit} applied=${s.applied} last=${s.lastIndex}`,
  ];
  if (s.progress) {
    for (const id of Object.keys(s.progress).sort()) {
      const pr = s.progress[id];
      lines.push(`  progress ${id}: match=${pr.match} next=${pr.next}`);
    }
  }
  return lines;
}
