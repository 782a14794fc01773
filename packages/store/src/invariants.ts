// Whole-store consistency checks for tests and fuzzing: the tables agree with their secondary
// indexes, and the index table is never behind the rows it summarises (or a blocking query could
// miss a change).
import { CHECKS, instanceKeys, NODES, nodeWatchKey, SERVICES } from './catalog/keys';
import type { IndexTable } from './index-table';
import type { State } from './state';

export function storeInvariants(state: State, indexes: IndexTable, lastIndex: number): string[] {
  const problems = state.invariants();
  problems.push(...state.requests.invariants(lastIndex));
  for (const [key, index] of indexes.entries()) {
    if (!(index >= 1 && index <= lastIndex)) problems.push(`index of ${key} is ${index}, outside 1..${lastIndex}`);
    if (!state.keepsIndexEntry(key)) problems.push(`index entry kept for vanished ${key}`);
  }
  const atLeast = (key: string, rowIndex: number, what: string) => {
    if (indexes.get(key) < rowIndex) problems.push(`${key} index ${indexes.get(key)} is behind ${what} (ModifyIndex ${rowIndex})`);
  };
  const { catalog } = state;
  for (const n of catalog.allNodes()) {
    atLeast(NODES, n.ModifyIndex, `node ${n.Node}`);
    atLeast(nodeWatchKey(n.Node), n.ModifyIndex, `node ${n.Node}`);
    for (const s of catalog.servicesOf(n.Node)) for (const k of instanceKeys(s)) atLeast(k, n.ModifyIndex, `node ${n.Node} of ${s.ID}`);
  }
  for (const s of catalog.allServices()) {
    atLeast(SERVICES, s.ModifyIndex, `service ${s.ID} on ${s.nodeKey}`);
    atLeast(nodeWatchKey(s.nodeKey), s.ModifyIndex, `service ${s.ID} on ${s.nodeKey}`);
    for (const k of instanceKeys(s)) atLeast(k, s.ModifyIndex, `service ${s.ID} on ${s.nodeKey}`);
  }
  for (const c of catalog.allChecks()) {
    atLeast(CHECKS, c.ModifyIndex, `check ${c.CheckID} on ${c.nodeKey}`);
    atLeast(nodeWatchKey(c.nodeKey), c.ModifyIndex, `check ${c.CheckID} on ${c.nodeKey}`);
    const services = c.serviceKey === '' ? catalog.servicesOf(c.nodeKey) : [catalog.serviceOfCheck(c)];
    for (const s of services) {
      if (s) for (const k of instanceKeys(s)) atLeast(k, c.ModifyIndex, `check ${c.CheckID} on ${c.nodeKey}`);
    }
  }
  return problems;
}
