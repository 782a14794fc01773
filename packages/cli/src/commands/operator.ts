// `registry operator raft list-peers|remove-peer|transfer-leader`.
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

  operator.addCommand(raft);
  return operator;
}
