/**
 * The nemesis of nemesis.test.ts: faults aimed at the current leader of a ClusterHarness —
 * SIGKILL (then restart), SIGSTOP for longer than an election timeout (then SIGCONT), and
 * isolation through the link proxies (then heal). It only signals servers the harness spawned
 * (by the pid the harness reports) and `release()` undoes whatever is still in force.
 */
import type { ClusterHarness } from './cluster-harness';

export type FaultKind = 'kill' | 'pause' | 'isolate';

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
  private readonly downMs: number;
  private readonly holdMs: number;
  private readonly electionWaitMs: number;

  constructor(
    private readonly cluster: ClusterHarness,
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

  /** SIGCONT to every paused server and every link healed. */
  release(): void {
    for (const i of [...this.paused.keys()]) this.resume(i);
    if (this.isolated) this.cluster.heal();
    this.isolated = false;
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
