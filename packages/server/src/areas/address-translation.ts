// `translate_wan_addrs` (consul-behaviour §1.7): an agent answering with nodes of another
// datacenter shows their WAN address (TaggedAddresses.wan) instead of their LAN `Address`, so a
// client in this datacenter gets an address it can reach. Applies to every node-shaped entry that
// says it belongs to another datacenter — catalog and health answers of a `?dc=` request and
// prepared-query failover results alike — and leaves everything else as it is.

type Json = unknown;

function isRecord(v: Json): v is Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The WAN address of a node-shaped object of another datacenter, if it has one. */
function wanOf(o: Record<string, Json>, localDc: string): string | undefined {
  if (typeof o.Address !== 'string' || typeof o.Datacenter !== 'string' || o.Datacenter === localDc) return undefined;
  const tagged = o.TaggedAddresses;
  if (!isRecord(tagged) || typeof tagged.wan !== 'string' || tagged.wan === '') return undefined;
  return tagged.wan;
}

/** A copy of `value` with foreign nodes' addresses translated; `translated` says whether any were. */
export function translateAddresses<T>(value: T, localDc: string): { value: T; translated: boolean } {
  let translated = false;
  const walk = (v: Json, depth: number): Json => {
    if (depth > 8) return v; // answers are shallow; never walk into arbitrary user data deeply
    if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1));
    if (!isRecord(v)) return v;
    const out: Record<string, Json> = {};
    for (const [k, x] of Object.entries(v)) out[k] = walk(x, depth + 1);
    const wan = wanOf(v, localDc);
    if (wan !== undefined && wan !== v.Address) {
      out.Address = wan;
      translated = true;
    }
    return out;
  };
  const out = walk(value, 0) as T;
  return { value: translated ? out : value, translated };
}
