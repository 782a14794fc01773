// Drives a Store the way Raft would: each command at the next index.
import { Store, type StoreOptions, type Command, type Coordinate, type DeregisterRequest, type RegisterRequest } from '@registry/store';

export class Driver {
  readonly store: Store;
  index = 0;

  constructor(datacenter?: string, opts: Omit<StoreOptions, 'datacenter'> = {}) {
    this.store = new Store(datacenter === undefined ? opts : { ...opts, datacenter });
  }

  apply(cmd: Command): unknown {
    return this.store.apply(++this.index, cmd);
  }

  register(req: RegisterRequest): unknown {
    return this.apply({ type: 'catalog.register', req });
  }

  deregister(req: DeregisterRequest): unknown {
    return this.apply({ type: 'catalog.deregister', req });
  }

  coordinates(updates: { Node: string; Coord: Coordinate }[]): unknown {
    return this.apply({ type: 'coordinate.update', updates });
  }
}

export const NODE_ID_A = '11111111-2222-3333-4444-555555555555';
export const NODE_ID_B = 'aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee';

export function coord(vec: number[], height = 0, adjustment = 0): Coordinate {
  const v = [...vec];
  while (v.length < 8) v.push(0);
  return { Vec: v, Error: 1.5, Adjustment: adjustment, Height: height };
}
