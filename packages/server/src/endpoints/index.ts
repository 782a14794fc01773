import { aclReads } from '../acl/acl-reads';
import { catalogReads } from './catalog-reads';
import { healthReads } from './health-reads';
import { intentionReads } from './intention-reads';
import { connectReads } from './connect-reads';
import type { ReadEndpoint } from './read-context';
import { sessionReads } from './session-reads';
import { kvReads } from './kv-reads';
import { queryReads } from './query-reads';
import { areaReads } from './area-reads';
import { coordinateReads } from './coordinate-reads';
import { eventReads } from './event-reads';
import { operatorReads } from './operator-reads';
import { txnReads } from './txn-reads';

const reads = {
  ...catalogReads,
  ...healthReads,
  ...intentionReads,
  ...connectReads,
  ...aclReads,
  ...sessionReads,
  ...kvReads,
  ...queryReads,
  ...areaReads,
  ...coordinateReads,
  ...eventReads,
  ...operatorReads,
  ...txnReads,
};

/**
 * Every read endpoint by name, each with its policy (forward, blocking, reuse): the name is what a
 * forwarded read carries to the leader, and rpc/rpc.ts looks the policy up by it.
 */
export const readEndpoints: Readonly<Record<string, ReadEndpoint>> = reads;

type Reads = typeof reads;

// The RPC contract learns each endpoint's args and value from here (rpc/contract.ts ReadMethods).
declare module '../rpc/contract' {
  // eslint-disable-next-line @typescript-eslint/no-empty-interface
  interface ReadMethods extends Reads {}
}

export type { ReadContext, ReadEndpoint, ReadForward, ReadPolicy } from './read-context';
