// One running watch (Consul 1.4's watch.Plan): a loop of blocking queries; when the answer's index
// moved and its value changed, the handler gets the value — the first answer always. Its failures are
// its own: a query that fails (an unknown datacenter, a token without the right, the agent busy) is
// reported, its index forgotten, and retried after 5 s × failures² (at most 3 min), as Consul's plan;
// a handler that fails (missing, non-zero exit, hung and killed, an endpoint refusing or silent) is
// reported and the next run waits 1 s, 2 s, 4 s … (at most 1 min) while it keeps failing, so a broken
// handler is not run in a hot loop by a busy key. Nothing here can end or stall the agent.
import type { Logger } from '../runtime/logger';
import { describeError, type RunnerFailures } from '../runtime/runner-failures';
import type { Answer } from './agent-fetch';
import type { WatchDefinition } from './watch-definition';
import { newestEventId, watchValue } from './watch-query';
import { printable } from './script-handler';

/** Consul's retryInterval and maxBackoffTime. */
const RETRY_MS = 5_000;
const MAX_RETRY_MS = 180_000;
const HANDLER_BACKOFF_MS = 1_000;
const MAX_HANDLER_BACKOFF_MS = 60_000;

export interface PlanDeps {
  /** One query at `index` (0: answer at once). */
  fetch(index: bigint, signal: AbortSignal): Promise<Answer>;
  /** Run the handler with the value; resolves with its output, rejects with why it failed. */
  handle(value: unknown, index: bigint, signal: AbortSignal): Promise<string>;
  failures: RunnerFailures;
  logger: Logger;
}

export class WatchPlan {
  private readonly stopper = new AbortController();
  /** Resolves when the loop has ended (after stop). */
  readonly ended: Promise<void>;

  constructor(
    readonly watch: WatchDefinition,
    readonly label: string,
    private readonly deps: PlanDeps,
  ) {
    // The loop catches what it expects; anything else is reported as this watch's failure too.
    this.ended = this.run().catch((err: unknown) => this.deps.failures.failed('watch', this.label, `stopped: ${describeError(err)}`));
  }

  /** Stop the loop; `killHandler` also stops a handler that is running (agent stop). */
  stop(killHandler = false): void {
    if (killHandler) this.handlerStop.abort();
    this.stopper.abort();
  }

  private readonly handlerStop = new AbortController();

  private get stopped(): boolean {
    return this.stopper.signal.aborted;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.stopper.signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.stopper.signal.addEventListener('abort', done);
    });
  }

  private async run(): Promise<void> {
    let index = 0n;
    let lastValue: string | undefined;
    let lastEventId: string | undefined;
    let failures = 0;
    let handlerFailures = 0;
    while (!this.stopped) {
      let answer: Answer;
      try {
        answer = await this.deps.fetch(index, this.stopper.signal);
        // An index the agent never sends would turn the loop into one that never blocks.
        if (answer.index === 0n) throw new Error('the answer has no X-Registry-Index');
      } catch (err) {
        if (this.stopped) break;
        failures++;
        index = 0n;
        const retry = Math.min(RETRY_MS * failures * failures, MAX_RETRY_MS);
        this.deps.failures.failed('watch', this.label, `query failed: ${describeError(err)}; retrying in ${retry / 1000} s`);
        await this.sleep(retry);
        continue;
      }
      if (this.stopped) break;
      failures = 0;
      if (answer.index === index) continue;
      const old = index;
      // A restored snapshot: start over, as Consul. The event list's index is no counter (the last
      // event's ID folded to 64 bits): it is sent back as it came.
      index = this.watch.type !== 'event' && answer.index < old ? 0n : answer.index;
      const value = watchValue(this.watch, answer.status, answer.body, lastEventId);
      if (this.watch.type === 'event') lastEventId = newestEventId(answer.body) ?? lastEventId;
      // An event watch compares the whole list: an answer with nothing new must not fire it.
      const json = JSON.stringify(this.watch.type === 'event' ? answer.body : value);
      if (old !== 0n && json === lastValue) continue;
      lastValue = json;
      try {
        const output = await this.deps.handle(value, answer.index, this.handlerStop.signal);
        handlerFailures = 0;
        this.deps.logger.debug({ watch: this.label, index: String(answer.index), output: printable(output) }, 'watch handler ran');
      } catch (err) {
        if (this.stopped && this.handlerStop.signal.aborted) break;
        handlerFailures++;
        const wait = Math.min(HANDLER_BACKOFF_MS * 2 ** (handlerFailures - 1), MAX_HANDLER_BACKOFF_MS);
        this.deps.failures.failed('watch', this.label, `handler failed: ${describeError(err)} (${handlerFailures} in a row; next run in ${wait / 1000} s at the earliest)`);
        await this.sleep(wait);
      }
    }
  }
}
