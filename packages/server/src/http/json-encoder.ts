// JSON text of an answer (not the large ones: sliced-json.ts writes those). A read answer shared by
// identical requests until the next apply (rpc/reused-reads.ts) is encoded once, as UTF-8 bytes:
// each answer then hands the socket the same buffer, where a string would be joined to the headers
// and converted to bytes again for every request (a `?stale` read profile: the conversion, the
// flattening of the joined string and the young-generation copies of it were ~10 % of a 3.8 KB
// answer's cost). The agent composes one per HTTP app, given the RPC layer's shared values.
import type { SharedValues } from '../rpc/reused-reads';

/** No shared values (a client agent's edge, tests): every value is encoded each time. */
const NONE_SHARED: SharedValues = { isShared: () => false, generation: 0 };

export class JsonEncoder {
  /** The bytes of shared values of the current generation. */
  private encoded = new WeakMap<object, Buffer>();
  private generation: number;

  constructor(private readonly shared: SharedValues = NONE_SHARED) {
    this.generation = shared.generation;
  }

  /** JSON.stringify, done once per shared value while its generation lasts. Bound: pass it as is. */
  readonly encode = (value: unknown): string | Buffer => {
    if (typeof value !== 'object' || value === null || !this.shared.isShared(value)) return JSON.stringify(value);
    if (this.shared.generation !== this.generation) {
      this.encoded = new WeakMap();
      this.generation = this.shared.generation;
    }
    let bytes = this.encoded.get(value);
    if (bytes === undefined) {
      bytes = Buffer.from(JSON.stringify(value));
      this.encoded.set(value, bytes);
    }
    return bytes;
  };
}
