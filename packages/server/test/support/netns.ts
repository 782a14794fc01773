// Hosts for tests where topology matters (issue #25): each agent in a Linux network namespace of
// its own, with its own address on a bridge, as containers run. On loopback a server's bind address
// and the address others reach it by are the same, which hid identity bugs; here an agent started
// with `-bind 0.0.0.0` is reachable only by its namespace's address.
//
// Layout of one network (names unique per run, so parallel jest workers do not collide):
//   namespace `<run>-br`  holds bridge `br0`
//   namespace `<run>-hN`  holds `eth0` = 10.250.X.(10+N)/24, its veth peer enslaved to br0
//   the test's own namespace holds `<run>h` = 10.250.X.1/24 (its peer on br0), to reach the agents
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

function ip(args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
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

  /** Delete every namespace and link made; safe to call twice, and after a failed create. */
  remove(): void {
    if (this.removed) return;
    this.removed = true;
    for (const ns of this.namespaces.reverse()) spawnSync('ip', ['netns', 'del', ns]);
    spawnSync('ip', ['link', 'del', this.hostLink]);
  }
}
