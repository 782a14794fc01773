// A request whose time is up must not arrive later (issue #25, seen in CI on the namespace harness:
// a client agent's write copy, sent into a link that dropped every packet, was delivered by the
// kernel's re-sends once the link healed and applied after the client had been told "outcome
// unknown"). TCP keeps unacknowledged bytes in the sender's send queue and re-sends them until the
// link comes back — a timeout in the program does not recall them, and neither does a close (it
// sends what is queued, then FIN). The transport's `discardOnTimeout` resets the connection instead,
// which drops the queue. Two real transports on two hosts (network namespaces), iptables dropping
// the packets between them; the control shows that without the reset the copy does arrive.
//
// Needs root, iproute2 and iptables; skipped with the reason printed otherwise.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { resolve } from 'node:path';
import { NetnsNetwork, netnsUnavailable, packetDropUnavailable, type Host } from '../support/netns';
import { eventually, sleep } from '../support/wait';

jest.setTimeout(90_000);

const unavailable = netnsUnavailable() ?? packetDropUnavailable();
if (unavailable) console.warn(`black-holed-copy.test.ts skipped: ${unavailable}`);
const describeHosts = unavailable ? describe.skip : describe;

const ROOT = resolve(__dirname, '../../../..');
const PORT = 8300;

/** Receives `copy` calls and prints `received <n>` for each. */
const RECEIVER = `
const { TcpTransport } = require('@registry/raft');
TcpTransport.listen({ host: process.argv[1], port: ${PORT} }).then((t) => {
  t.handle('copy', (body) => { console.log('received ' + body.n); return 'ok'; });
  console.log('listening');
});`;

/** Reads `call <n> <timeoutMs> <discard 0|1>` lines and prints `answer <n>` or `timeout <n>`. */
const SENDER = `
const { TcpTransport } = require('@registry/raft');
const readline = require('node:readline');
TcpTransport.listen({ host: process.argv[1], port: ${PORT} }).then((t) => {
  console.log('listening');
  readline.createInterface({ input: process.stdin }).on('line', (line) => {
    const [, n, timeoutMs, discard] = line.split(' ');
    t.call(process.argv[2], 'copy', { n: Number(n) }, Number(timeoutMs), { discardOnTimeout: discard === '1' })
      .then(() => console.log('answer ' + n), (err) => console.log((err.name === 'RpcTimeoutError' ? 'timeout ' : 'failed ') + n));
  });
});`;

class Script {
  readonly lines: string[] = [];
  readonly child: ChildProcess;
  constructor(host: Host, source: string, args: string[]) {
    this.child = spawn('ip', ['netns', 'exec', host.ns, process.execPath, '-e', source, ...args], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
    createInterface({ input: this.child.stdout! }).on('line', (l) => this.lines.push(l.trim()));
  }
  async saw(line: string, timeoutMs = 15_000): Promise<boolean> {
    return eventually(async () => this.lines.includes(line), timeoutMs, 50);
  }
  send(line: string): void {
    this.child.stdin!.write(`${line}\n`);
  }
  stop(): void {
    this.child.kill('SIGKILL');
  }
}

let net: NetnsNetwork | undefined;
const scripts: Script[] = [];
afterEach(() => {
  for (const s of scripts.splice(0)) s.stop();
  net?.remove();
  net = undefined;
});

async function blackHoledCopy(discard: boolean): Promise<{ receiver: Script; sender: Script }> {
  net = NetnsNetwork.create();
  const [a, b] = [net.addHost(), net.addHost()] as [Host, Host];
  const receiver = new Script(b, RECEIVER, [b.address]);
  const sender = new Script(a, SENDER, [a.address, `${b.address}:${PORT}`]);
  scripts.push(receiver, sender);
  expect(await receiver.saw('listening')).toBe(true);
  expect(await sender.saw('listening')).toBe(true);
  // The connection is up and answering before the link goes silent.
  sender.send('call 1 5000 0');
  expect(await sender.saw('answer 1')).toBe(true);
  net.partition([[a], [b]]);
  sender.send(`call 2 1500 ${discard ? 1 : 0}`);
  expect(await sender.saw('timeout 2', 10_000)).toBe(true);
  net.heal();
  return { receiver, sender };
}

describeHosts('a timed-out request held in a black-holed link (two hosts, packets dropped)', () => {
  test('without discardOnTimeout the kernel delivers it after the link heals (the harness reproduces the hazard)', async () => {
    const { receiver } = await blackHoledCopy(false);
    expect(await receiver.saw('received 2', 30_000)).toBe(true);
  });

  test('with discardOnTimeout it never arrives, and the next request goes through on a new connection', async () => {
    const { receiver, sender } = await blackHoledCopy(true);
    sender.send('call 3 10000 1');
    expect(await sender.saw('answer 3', 15_000)).toBe(true);
    // The control above sees the re-sent bytes within a few seconds of the heal; wait well past that.
    await sleep(12_000);
    expect(receiver.lines.filter((l) => l.startsWith('received'))).toEqual(['received 1', 'received 3']);
  });
});
