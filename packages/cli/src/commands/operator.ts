// `registry operator raft list-peers|remove-peer|transfer-leader|promote`.
import { Command } from 'commander';
import { attempt, usage } from '../action';
import { clientOf, withServerFlags } from '../http-flags';
import { out, printTable } from '../output';

interface RaftServer {
  Node: string;
  ID: string;
  Address: string;
  Leader: boolean;
  Voter: boolean;
  ProtocolVersion?: string;
}

export function operatorCommand(): Command {
  const operator = new Command('operator').description('cluster-level operations');
  const raft = new Command('raft').description('the Raft subsystem');

  const list = withServerFlags(new Command('list-peers').description('show the Raft peer set'));
  raft.addCommand(
    list.action(() =>
      attempt('Error getting peers', async () => {
        const conf = await clientOf(list.opts()).get<{ Servers: RaftServer[] }>('/v1/operator/raft/configuration');
        printTable([
          ['Node', 'ID', 'Address', 'State', 'Voter', 'RaftProtocol'],
          ...conf.Servers.map((s) => [s.Node, s.ID, s.Address, s.Leader ? 'leader' : 'follower', String(s.Voter), s.ProtocolVersion ?? '3']),
        ]);
      }),
    ),
  );

  const remove = withServerFlags(new Command('remove-peer').description('remove a server from the Raft configuration'))
    .option('--address <ip:port>', 'the server-port address of the peer to remove')
    .option('--id <id>', 'the node ID of the peer to remove');
  raft.addCommand(
    remove.action(() =>
      attempt('Error removing peer', async () => {
        const o = remove.opts();
        if (!o.address && !o.id) throw usage('Error removing peer: Must specify either -id or -address');
        if (o.address && o.id) throw usage('Error removing peer: Must specify only one of -id or -address');
        await clientOf(o).request('DELETE', '/v1/operator/raft/peer', { query: { address: o.address, id: o.id } });
        out(o.address ? `Removed peer with address "${o.address}"` : `Removed peer with id "${o.id}"`);
      }),
    ),
  );

  const transfer = withServerFlags(new Command('transfer-leader').description('hand Raft leadership to another server'))
    .option('--id <id>', 'the node ID of the server to hand leadership to (default: any up-to-date voter)');
  raft.addCommand(
    transfer.action(() =>
      attempt('Error transferring leadership', async () => {
        const o = transfer.opts();
        await clientOf(o).request('POST', '/v1/operator/raft/transfer-leader', { query: { id: o.id } });
        out('Success');
      }),
    ),
  );

  // Issue #14: a non-voting server (-non-voter) becomes a voter. Given as an argument (id or
  // address, told apart by the colon of host:port) or with -id / -address like remove-peer.
  const promote = withServerFlags(new Command('promote').description('make a non-voting server a voter'))
    .argument('[server]', 'the node ID or server-port address (ip:port) of the non-voter')
    .option('--address <ip:port>', 'the server-port address of the non-voter')
    .option('--id <id>', 'the node ID of the non-voter');
  raft.addCommand(
    promote.action((server: string | undefined) =>
      attempt('Error promoting peer', async () => {
        const o = promote.opts();
        const given = [server, o.address, o.id].filter((v) => v !== undefined);
        if (given.length === 0) throw usage('Error promoting peer: Must specify the server\'s id or address (or -id / -address)');
        if (given.length > 1) throw usage('Error promoting peer: Must specify only one of <server>, -id or -address');
        const byAddress = o.address !== undefined || (server !== undefined && server.includes(':'));
        const value = (server ?? o.address ?? o.id) as string;
        await clientOf(o).request('POST', '/v1/operator/raft/promote', { query: byAddress ? { address: value } : { id: value } });
        out(byAddress ? `Promoted peer with address "${value}"` : `Promoted peer with id "${value}"`);
      }),
    ),
  );

  operator.addCommand(raft);
  return operator;
}
