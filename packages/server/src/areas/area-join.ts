// Joining an area (`PUT /v1/operator/area/:uuid/join`, and RetryJoin): greet every address; a server
// of the area's peer datacenter that answers is a success, and it and the servers of its datacenter
// become known to this datacenter. Failures are reported per address, never as an error status.
import type { AreaOut } from '@registry/store';
import { joinAddress } from './join-address';
import type { WanLinks } from './wan-links';
import type { WanServer } from './wan-protocol';

export interface JoinResult {
  Address: string;
  Joined: boolean;
  /** Why the join failed; empty when Joined. */
  Error: string;
}

export async function joinArea(links: WanLinks, area: AreaOut, addresses: readonly string[]): Promise<JoinResult[]> {
  const learned: WanServer[] = [];
  const results = await Promise.all(
    addresses.map(async (text): Promise<JoinResult> => {
      const fail = (why: string): JoinResult => ({ Address: text, Joined: false, Error: why });
      const address = joinAddress(text);
      if (address instanceof Error) return fail(address.message);
      let reply;
      try {
        reply = await links.hello(address, area);
      } catch (err) {
        return fail(`Failed to join ${address}: ${(err as Error).message}`);
      }
      const dc = reply.self.datacenter;
      if (dc.toLowerCase() === links.datacenter.toLowerCase()) return fail(`Server at ${address} is in this datacenter (${dc}), not the area's peer`);
      if (dc.toLowerCase() !== area.PeerDatacenter.toLowerCase()) {
        return fail(`Server at ${address} is in datacenter "${dc}", but the area's peer is "${area.PeerDatacenter}"`);
      }
      learned.push(reply.self, ...(reply.servers ?? []));
      return { Address: text, Joined: true, Error: '' };
    }),
  );
  if (learned.length > 0) await links.learn(area, learned);
  return results;
}
