// Hosts for tests where topology matters (issue #25): each agent in a Linux network namespace of
// its own, with its own address on a bridge, as containers run. On loopback a server's bind address
// and the address others reach it by are the same, which hid identity bugs; here an agent started
// with `-bind 0.0.0.0` is reachable only by its namespace's address.
//
// Layout of one network (names unique per run, so parallel jest workers do not collide):
//   namespace `<run>-br`  holds bridge `br0`
//   namespace `<run>-hN`  holds `eth0` = 10.250.X.(10+N)/24, its veth peer enslaved to br0
//   the test's own namespace holds `<run>h` = 10.250.X.1/24 (its peer on br0), to reach the agents
// Two ways to cut hosts apart: `setLink` takes a host's eth0 down (sends fail at once, nothing is
// heard), `partition` drops packets with iptables inside the namespaces (a silent black hole: TCP
// waits and re-sends, as a lost route or a firewall does). The test's own host is never dropped, so
// a test can still ask every side of a partition what it answers.
// Everything is removed by `remove()` (deleting a namespace deletes the veth ends in it), which
// tests call in afterAll/finally, so a failure leaves nothing behind. Needs root and iproute2.
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';

/** Null when namespaces can be made here, else why not (the tests print it and skip). */
export function netnsUnavailable(): string | null {
  if (process.platform !== 'linux') return `network namespaces need Linux (this is ${process.platform})`;
  if (typeof process.getuid === 'function' && process.getuid() !== 0) return 'network namespaces need root (tests run as uid ' + process.getuid() + ')';
  const probe = `regprobe-${randomBytes(3).toString('hex')}`;
  const add = spawnSync('ip', ['netns', 'add', probe], { encoding: 'utf8' });
  if (add.error) return `iproute2's ip is not available: ${add.error.message}`;
  if (add.status !== 0) return `ip netns add failed: ${add.stderr.trim()}`;
  spawnSync('ip', ['netns', 'del', probe]);
  return null;
}

/** Null when packets can be dropped inside the namespaces (iptables), else why not. */
export function packetDropUnavailable(): string | null {
  const probe = spawnSync('iptables-restore', ['--version'], { encoding: 'utf8' });
  if (probe.error) return `iptables-restore is not available (apt-get install iptables): ${probe.error.message}`;
  return null;
}

function ip(args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** `iptables-restore` inside a namespace: the whole filter table replaced at once (so a heal never leaves half the rules). */
function iptablesRestore(ns: string, rules: string): void {
  execFileSync('ip', ['netns', 'exec', ns, 'iptables-restore'], { input: rules, stdio: ['pipe', 'ignore', 'pipe'] });
}

export interface Host {
  /** The namespace's name, for `ip netns exec` / `ip -n`. */
  ns: string;
  /** Its address on the bridge. */
  address: string;
}

export class NetnsNetwork {
  private readonly hosts: Host[] = [];
  private readonly namespaces: string[] = [];
  private removed = false;
  /** Namespaces with drop rules in force. */
  private readonly dropping = new Set<string>();

  private constructor(
    /** Short and unique for this run: a prefix of every name made. */
    readonly run: string,
    /** The /24 prefix, e.g. "10.250.37". */
    readonly subnet: string,
    private readonly hostLink: string,
  ) {}

  /** A bridge, and the test's own link to it. Remove it with remove(). */
  static create(): NetnsNetwork {
    const run = `rg${randomBytes(2).toString('hex')}${(process.pid % 100).toString().padStart(2, '0')}`;
    const used = execFileSync('ip', ['-4', '-o', 'addr'], { encoding: 'utf8' });
    let subnet = '';
    for (let tries = 0; tries < 50 && !subnet; tries++) {
      const candidate = `10.250.${Math.floor(Math.random() * 256)}`;
      if (!used.includes(` ${candidate}.`)) subnet = candidate;
    }
    if (!subnet) throw new Error('no free 10.250.X.0/24 for the test network');
    const net = new NetnsNetwork(run, subnet, `${run}h`);
    try {
      const br = `${run}-br`;
      ip(['netns', 'add', br]);
      net.namespaces.push(br);
      ip(['-n', br, 'link', 'add', 'br0', 'type', 'bridge']);
      ip(['-n', br, 'link', 'set', 'br0', 'up']);
      // The test's side: one veth end here, its peer on the bridge.
      ip(['link', 'add', net.hostLink, 'type', 'veth', 'peer', 'name', `${run}p`]);
      ip(['link', 'set', `${run}p`, 'netns', br]);
      ip(['-n', br, 'link', 'set', `${run}p`, 'master', 'br0']);
      ip(['-n', br, 'link', 'set', `${run}p`, 'up']);
      ip(['addr', 'add', `${subnet}.1/24`, 'dev', net.hostLink]);
      ip(['link', 'set', net.hostLink, 'up']);
    } catch (err) {
      net.remove();
      throw err;
    }
    return net;
  }

  /** A new host: its namespace, `eth0` on the bridge with the next address (or none: `address: false`). */
  addHost(options: { extraAddresses?: string[]; address?: boolean } = {}): Host {
    const n = this.namespaces.length; // 1, 2, …
    const ns = `${this.run}-h${n}`;
    ip(['netns', 'add', ns]);
    this.namespaces.push(ns);
    const address = `${this.subnet}.${10 + n}`;
    const peer = `${this.run}v${n}`;
    ip(['-n', ns, 'link', 'set', 'lo', 'up']);
    ip(['link', 'add', peer, 'netns', `${this.run}-br`, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
    ip(['-n', `${this.run}-br`, 'link', 'set', peer, 'master', 'br0']);
    ip(['-n', `${this.run}-br`, 'link', 'set', peer, 'up']);
    if (options.address !== false) ip(['-n', ns, 'addr', 'add', `${address}/24`, 'dev', 'eth0']);
    for (const extra of options.extraAddresses ?? []) ip(['-n', ns, 'addr', 'add', extra, 'dev', 'eth0']);
    ip(['-n', ns, 'link', 'set', 'eth0', 'up']);
    const host = { ns, address };
    this.hosts.push(host);
    return host;
  }

  /** Cut a host off the network (its link down, inside its namespace) or connect it again. */
  setLink(host: Host, up: boolean): void {
    ip(['-n', host.ns, 'link', 'set', 'eth0', up ? 'up' : 'down']);
  }

  /**
   * Drops every packet between hosts of different groups (both ways, iptables inside each of the
   * hosts' namespaces); hosts in no group are not touched, and the test's own host reaches all.
   * Replaces any drop rules in force. Established connections are cut too (no ESTABLISHED accept).
   */
  partition(groups: ReadonlyArray<readonly Host[]>): void {
    const pairs: Array<readonly [Host, Host]> = [];
    groups.forEach((a, g) => groups.slice(g + 1).forEach((b) => a.forEach((x) => b.forEach((y) => pairs.push([x, y])))));
    this.dropBetween(pairs);
  }

  /** Drops every packet between the hosts of each pair (both ways), and nothing else: replaces any drop rules in force. */
  dropBetween(pairs: ReadonlyArray<readonly [Host, Host]>): void {
    const peers = new Map<string, string[]>();
    for (const [a, b] of pairs) {
      peers.set(a.ns, [...(peers.get(a.ns) ?? []), b.address]);
      peers.set(b.ns, [...(peers.get(b.ns) ?? []), a.address]);
    }
    for (const host of this.hosts) {
      const drop = peers.get(host.ns) ?? [];
      if (drop.length === 0 && !this.dropping.has(host.ns)) continue;
      iptablesRestore(host.ns, filterTable(drop));
      if (drop.length > 0) this.dropping.add(host.ns);
      else this.dropping.delete(host.ns);
    }
  }

  /** Every host reaches every other again (the drop rules flushed). */
  heal(): void {
    for (const ns of [...this.dropping]) iptablesRestore(ns, filterTable([]));
    this.dropping.clear();
  }

  /** Delete every namespace and link made; safe to call twice, and after a failed create. */
  remove(): void {
    if (this.removed) return;
    this.removed = true;
    for (const ns of this.namespaces.reverse()) spawnSync('ip', ['netns', 'del', ns]);
    spawnSync('ip', ['link', 'del', this.hostLink]);
  }
}

/** An iptables-restore filter table dropping everything to and from `addresses`. */
function filterTable(addresses: readonly string[]): string {
  const rules = addresses.flatMap((a) => [`-A INPUT -s ${a}/32 -j DROP`, `-A OUTPUT -d ${a}/32 -j DROP`]);
  return ['*filter', ':INPUT ACCEPT [0:0]', ':FORWARD ACCEPT [0:0]', ':OUTPUT ACCEPT [0:0]', ...rules, 'COMMIT', ''].join('\n');
}
