// The coordinates table: the latest Vivaldi coordinate per node (Consul keeps one per network
// segment; this registry has only the default segment).
import { COORDINATES, fold } from '../catalog/keys';
import { copyCoordinate, type Coordinate } from './vivaldi';
import { plainEqual } from '../plain-data';
import { Fields, pairStream } from '../snapshot-stream';
import type { Txn } from '../txn';

export interface CoordinateTableDump {
  coordinates: [string, Coordinate][];
}

export class CoordinateTable {
  private readonly byNode = new Map<string, Coordinate>();

  get(node: string): Coordinate | undefined {
    const c = this.byNode.get(fold(node));
    return c && copyCoordinate(c);
  }

  /** Every [folded node name, coordinate] pair, copied. */
  all(): [string, Coordinate][] {
    return [...this.byNode.entries()].map(([k, c]) => [k, copyCoordinate(c)]);
  }

  set(nodeKey: string, coord: Coordinate, txn: Txn): void {
    if (plainEqual(this.byNode.get(nodeKey), coord)) return;
    this.byNode.set(nodeKey, copyCoordinate(coord));
    txn.bump(COORDINATES);
  }

  delete(nodeKey: string, txn: Txn): void {
    if (this.byNode.delete(nodeKey)) txn.bump(COORDINATES);
  }

  nodeKeys(): string[] {
    return [...this.byNode.keys()];
  }

  dump(): CoordinateTableDump {
    return { coordinates: this.all() };
  }

  /**
   * dump() as of now, serialised later: coordinates are stored as copies and replaced, never changed,
   * so the stored ones are written (dump() copies them; the bytes are the same).
   */
  capture(): Fields {
    return new Fields([['coordinates', pairStream([...this.byNode.keys()], [...this.byNode.values()])]]);
  }

  static load(dump: CoordinateTableDump): CoordinateTable {
    const t = new CoordinateTable();
    for (const [k, c] of dump.coordinates) t.byNode.set(k, copyCoordinate(c));
    return t;
  }
}
