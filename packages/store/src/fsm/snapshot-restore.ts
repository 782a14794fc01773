// `snapshot.restore` replaces the whole state, which no per-table handler can do: Store.apply
// recognises it and swaps the state itself (store.ts applyRestore). This entry keeps the handler
// table complete; reaching it would mean the store's own dispatch was bypassed.
import { CommandError } from '../command-error';
import type { CommandHandler } from './command-handler';

export const snapshotRestore: CommandHandler<{ type: 'snapshot.restore' }> = () =>
  new CommandError('snapshot.restore is applied by the store as a whole');
