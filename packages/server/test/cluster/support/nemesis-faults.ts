/**
 * The nemesis of nemesis.test.ts and multi-host-nemesis.test.ts: faults aimed at the current
 * leader of a cluster — SIGKILL (then restart), SIGSTOP for longer than an election timeout (then
 * SIGCONT), isolation from the other servers (then heal: link proxies on loopback, dropped packets
 * between network namespaces) and, where the cluster has hosts, its link taken down (then up). It
 * only signals servers the cluster spawned (by the pid it reports) and `release()` undoes whatever
 * is still in force.
 */
import type { HttpAnswer, HttpOptions } from './http-answer';

export type FaultKind = 'kill' | 'pause' | 'isolate' | 'link-down';

/** What the nemesis and its workloads need of a cluster: ClusterHarness (loopback) and HostCluster (namespaces). */
export interface FaultTarget {
  readonly servers: ReadonlyArray<{ readonly index: number }>;
  http(i: number, method: string, path: string, body?: unknown, options?: HttpOptions): Promise<HttpAnswer>;
  leader(): Promise<number | undefined>;
  waitForLeader(timeoutMs?: number): Promise<number>;
  /** Until every running server follows a leader and has caught up with it: a server still catching up does not vote. */
  waitAllCaughtUp(timeoutMs?: number): Promise<void>;
  kill(i: number, signal?: NodeJS.Signals): Promise<void>;
  restart(i: number): Promise<void>;
  running(i: number): boolean;
  pid(i: number): number | undefined;
  /** Cuts every link between servers of different groups. */
  partition(...groups: number[][]): void;
  heal(): void;
  /** Takes server i's network link down or up (only clusters on hosts of their own have one). */
  setLink?(i: number, up: boolean): void;
}

export interface FaultRecord {
  kind: FaultKind;
  server: number;
  /** ms since the nemesis was created. */
  startedAt: number;
  /** How long the fault was in force, ms. */
  lastedMs: number;
  /** The leader a majority named while the fault was in force (undefined: none seen). */
  nextLeader?: number;
}

export interface NemesisOptions {
  /** How long a killed server stays down before it is restarted (default 2500 ms). */
  downMs?: number;
  /** How long a fault stays in force after the others have elected a new leader (default 1500 ms). */
  holdAfterElectionMs?: number;
  /** The longest a fault waits for the others to elect a new leader (default 8000 ms). */
  electionWaitMs?: number;
}

const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

export class Nemesis {
  readonly faults: FaultRecord[] = [];
  private readonly t0 = Date.now();
  private readonly paused = new Map<number, number>();
  private isolated = false;
  private readonly linkDown = new Set<number>();
  private readonly downMs: number;
  private readonly holdMs: number;
  private readonly electionWaitMs: number;

  constructor(
    private readonly cluster: FaultTarget,
    private readonly log: (line: string) => void = () => undefined,
    options: NemesisOptions = {},
  ) {
    this.downMs = options.downMs ?? 2500;
    this.holdMs = options.holdAfterElectionMs ?? 1500;
    this.electionWaitMs = options.electionWaitMs ?? 8000;
  }

  async run(kind: FaultKind): Promise<FaultRecord> {
    const leader = await this.cluster.waitForLeader(20_000);
    const startedAt = Date.now();
    let nextLeader: number | undefined;
    this.log(`nemesis +${this.elapsed()}ms: ${kind} leader s${leader}`);
    switch (kind) {
      case 'kill': {
        await this.cluster.kill(leader, 'SIGKILL');
        const [next] = await Promise.all([this.newLeader(leader), sleep(this.downMs)]);
        nextLeader = next;
        await this.cluster.restart(leader);
        break;
      }
      case 'pause': {
        const pid = this.cluster.pid(leader);
        if (pid === undefined) throw new Error(`s${leader} is not running`);
        process.kill(pid, 'SIGSTOP');
        this.paused.set(leader, pid);
        nextLeader = await this.newLeader(leader);
        await sleep(this.holdMs);
        this.resume(leader);
        break;
      }
      case 'isolate': {
        const others = this.cluster.servers.map((s) => s.index).filter((i) => i !== leader);
        this.cluster.partition([leader], others);
        this.isolated = true;
        nextLeader = await this.newLeader(leader);
        await sleep(this.holdMs);
        this.cluster.heal();
        this.isolated = false;
        break;
      }
      case 'link-down': {
        const setLink = this.cluster.setLink?.bind(this.cluster);
        if (!setLink) throw new Error('this cluster has no links to take down (link-down needs hosts of their own)');
        setLink(leader, false);
        this.linkDown.add(leader);
        nextLeader = await this.newLeader(leader);
        await sleep(this.holdMs);
        setLink(leader, true);
        this.linkDown.delete(leader);
        break;
      }
    }
    const record: FaultRecord = { kind, server: leader, startedAt: startedAt - this.t0, lastedMs: Date.now() - startedAt, nextLeader };
    this.faults.push(record);
    this.log(`nemesis +${this.elapsed()}ms: ${kind} s${leader} over after ${record.lastedMs}ms (new leader ${nextLeader === undefined ? 'none seen' : `s${nextLeader}`})`);
    return record;
  }

  /** Waits (bounded) until every server runs and all name the same leader. */
  async settle(timeoutMs = 20_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const answers = await Promise.all(
        this.cluster.servers.map(async (s) => {
          if (!this.cluster.running(s.index)) return undefined;
          try {
            const r = await this.cluster.http(s.index, 'GET', '/v1/status/leader', undefined, { timeoutMs: 1000 });
            return r.status === 200 ? r.json<string>() : undefined;
          } catch {
            return undefined;
          }
        }),
      );
      if (answers.every((a) => a && a === answers[0])) return true;
      await sleep(200);
    }
    return false;
  }

  /** SIGCONT to every paused server, every link healed and up. */
  release(): void {
    for (const i of [...this.paused.keys()]) this.resume(i);
    if (this.isolated) this.cluster.heal();
    this.isolated = false;
    for (const i of [...this.linkDown]) this.cluster.setLink?.(i, true);
    this.linkDown.clear();
  }

  private resume(i: number): void {
    const pid = this.paused.get(i);
    this.paused.delete(i);
    // Only the very process we stopped, and only while the harness still has it running.
    if (pid !== undefined && this.cluster.pid(i) === pid) process.kill(pid, 'SIGCONT');
  }

  /** The first leader other than `old` that a majority names, within the election wait. */
  private async newLeader(old: number): Promise<number | undefined> {
    const deadline = Date.now() + this.electionWaitMs;
    while (Date.now() < deadline) {
      const l = await this.cluster.leader();
      if (l !== undefined && l !== old) return l;
      await sleep(100);
    }
    return undefined;
  }

  private elapsed(): number {
    return Date.now() - this.t0;
  }
}
