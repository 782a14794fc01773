// Linearizable reads: asked of the core by ctx, confirmed with a read index, released once the
// local state machine has applied that far.

interface Read {
  resolve(): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
  /** Set once the core has confirmed a read index. */
  index?: number;
}

export class PendingReads {
  private readonly reads = new Map<number, Read>();
  private nextCtx = 1;

  /** Registers a read; `onTimeout` rejects it if it is still pending after `timeoutMs`. */
  start(timeoutMs: number, onTimeout: () => Error): { ctx: number; done: Promise<void> } {
    const ctx = this.nextCtx++;
    const done = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.reads.delete(ctx);
        reject(onTimeout());
      }, timeoutMs);
      this.reads.set(ctx, { resolve, reject, timer });
    });
    return { ctx, done };
  }

  confirmed(ctx: number, index: number, applied: number): void {
    const r = this.reads.get(ctx);
    if (!r) return;
    r.index = index;
    if (applied >= index) this.finish(ctx, r, null);
  }

  failed(ctx: number, err: Error): void {
    const r = this.reads.get(ctx);
    if (r) this.finish(ctx, r, err);
  }

  /** Releases every confirmed read whose index has been applied. */
  appliedTo(applied: number): void {
    for (const [ctx, r] of this.reads) {
      if (r.index !== undefined && r.index <= applied) this.finish(ctx, r, null);
    }
  }

  failAll(err: () => Error): void {
    for (const [ctx, r] of this.reads) this.finish(ctx, r, err());
  }

  private finish(ctx: number, r: Read, err: Error | null): void {
    this.reads.delete(ctx);
    clearTimeout(r.timer);
    if (err) r.reject(err);
    else r.resolve();
  }
}
