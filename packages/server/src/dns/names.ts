// What a query name asks for (Consul's dns.go dispatch), under the configured domain:
//   [<tag>.]<service>.service[.<dc>].<domain>     A/AAAA (or SRV) of a service's healthy instances
//   _<service>._<tag|tcp>.service[.<dc>].<domain>  RFC 2782 form (`_tcp` means no tag filter); for
//                                                  SRV the `service` label may be left out
//   <node>.node[.<dc>].<domain>                    a node's address
//   <query>.query[.<dc>].<domain>                  a prepared query, by id or name
//   <hex ip>.addr[.<dc>].<domain>                  an address (the SRV targets of service addresses)
// Parsing walks from the right: the last label is the kind, or else one datacenter label before it.
// Names are compared lower-cased (the catalog folds case too).
import { isIPv4 } from 'node:net';

export type Lookup =
  | { kind: 'service'; service: string; tag: string; datacenter: string | undefined }
  | { kind: 'node'; node: string; datacenter: string | undefined }
  | { kind: 'query'; query: string; datacenter: string | undefined }
  | { kind: 'addr'; ip: string; datacenter: string | undefined }
  /** Under the domain, but no such name can exist (NXDOMAIN). */
  | { kind: 'invalid' };

/** Where a query name falls: outside the domain, the domain itself, or a name under it. */
export type Placement = { at: 'outside' } | { at: 'apex' } | { at: 'below'; labels: string[] };

/** A name as the wire decodes it ("web.service.registry", any case, maybe with a final dot) against `domain`. */
export function placeName(name: string, domain: string): Placement {
  const n = name.toLowerCase().replace(/\.$/, '');
  if (n === domain) return { at: 'apex' };
  if (!n.endsWith(`.${domain}`)) return { at: 'outside' };
  return { at: 'below', labels: n.slice(0, -(domain.length + 1)).split('.') };
}

/** The lookup the labels before the domain ask for; `srv`: the question is of type SRV. */
export function parseLabels(labels: readonly string[], srv: boolean): Lookup {
  let rest = [...labels];
  let datacenter: string | undefined;
  for (;;) {
    let n = rest.length;
    if (n === 0 || rest.some((l) => l === '')) return { kind: 'invalid' };
    // For SRV the `service` label is optional after an RFC 2782 `_tag`.
    if (srv && rest[n - 1].startsWith('_')) {
      rest = [...rest, 'service'];
      n += 1;
    }
    const kind = rest[n - 1];
    switch (kind) {
      case 'service': {
        if (n === 1) return { kind: 'invalid' };
        if (n === 3 && rest[0].startsWith('_') && rest[1].startsWith('_')) {
          const tag = rest[1].slice(1);
          return { kind: 'service', service: rest[0].slice(1), tag: tag === 'tcp' ? '' : tag, datacenter };
        }
        // A tag may contain dots: every label before the service name is the tag.
        return { kind: 'service', service: rest[n - 2], tag: n >= 3 ? rest.slice(0, n - 2).join('.') : '', datacenter };
      }
      case 'node':
        if (n === 1) return { kind: 'invalid' };
        return { kind: 'node', node: rest.slice(0, n - 1).join('.'), datacenter };
      case 'query':
        if (n === 1) return { kind: 'invalid' };
        return { kind: 'query', query: rest.slice(0, n - 1).join('.'), datacenter };
      case 'addr': {
        if (n !== 2) return { kind: 'invalid' };
        const ip = ipOfHex(rest[0]);
        return ip ? { kind: 'addr', ip, datacenter } : { kind: 'invalid' };
      }
      default:
        // Datacenter names have no dots: one label between the kind and the domain, at most.
        if (datacenter !== undefined) return { kind: 'invalid' };
        datacenter = kind;
        rest = rest.slice(0, n - 1);
    }
  }
}

/** `0a000001` → 10.0.0.1; 32 hex digits → an IPv6 address; anything else → undefined. */
export function ipOfHex(label: string): string | undefined {
  if (!/^[0-9a-f]+$/.test(label)) return undefined;
  if (label.length === 8) return [0, 2, 4, 6].map((i) => parseInt(label.slice(i, i + 2), 16)).join('.');
  if (label.length === 32) return [...Array(8).keys()].map((i) => label.slice(i * 4, i * 4 + 4).replace(/^0{1,3}/, '')).join(':');
  return undefined;
}

/** The `addr` label of an IP (the inverse of ipOfHex): 8 hex digits for IPv4, 32 for IPv6. */
export function hexOfIp(ip: string): string {
  if (isIPv4(ip)) return ip.split('.').map((b) => Number(b).toString(16).padStart(2, '0')).join('');
  let text = ip;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const h = hexOfIp(v4[1]);
    text = `${text.slice(0, -v4[1].length)}${h.slice(0, 4)}:${h.slice(4)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  return groups.map((g) => g.padStart(4, '0')).join('').toLowerCase();
}
