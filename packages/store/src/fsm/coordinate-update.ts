// coordinate.update: a batch of node coordinates. Updates for nodes the catalog does not know are
// dropped (the node may have been deregistered while the batch was queued); a malformed coordinate
// refuses the whole batch.
import { CommandError } from '../command-error';
import type { CoordinateUpdate } from '../commands';
import { fold } from '../catalog/keys';
import { coordinateProblem, copyCoordinate, type Coordinate } from '../coordinates/vivaldi';
import { optObject, str } from '../input-fields';
import type { CommandHandler } from './command-handler';

export const coordinateUpdate: CommandHandler<{ updates: CoordinateUpdate[] }> = (state, cmd) => {
  if (!Array.isArray(cmd.updates)) return new CommandError('Invalid field updates: expected an array');
  const updates: { node: string; coord: Coordinate }[] = [];
  for (const [i, raw] of cmd.updates.entries()) {
    const u = optObject(raw, `updates[${i}]`) ?? {};
    const node = str(u, 'Node', `updates[${i}]`);
    if (node === '') return new CommandError(`Invalid field updates[${i}].Node: must name a node`);
    const problem = coordinateProblem(u.Coord);
    if (problem) return new CommandError(`Invalid coordinate for node "${node}": ${problem}`);
    updates.push({ node, coord: copyCoordinate(u.Coord as Coordinate) });
  }
  return (txn) => {
    for (const { node, coord } of updates) {
      if (state.catalog.node(node)) state.coordinates.set(fold(node), coord, txn);
    }
    return true;
  };
};
