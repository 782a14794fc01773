// Which configuration is in force at each point of the log. A server uses the
// latest configuration in its log whether or not it is committed (Raft thesis
// §4.1), so truncating a Config entry must bring the previous one back.
import type { Configuration } from './types';

interface ConfigChange {
  index: number;
  configuration: Configuration;
}

export class ConfigurationHistory {
  /** In force at (and before) the log's compaction point. */
  private base: Configuration;
  /** Config entries still in the log, in index order. */
  private changes: ConfigChange[] = [];

  constructor(base: Configuration) {
    this.base = base;
  }

  get latest(): Configuration {
    return this.changes.length === 0 ? this.base : this.changes[this.changes.length - 1].configuration;
  }

  /** The index of the newest Config entry in the log, 0 when there is none after the compaction point. */
  get latestIndex(): number {
    return this.changes.length === 0 ? 0 : this.changes[this.changes.length - 1].index;
  }

  at(index: number): Configuration {
    for (let i = this.changes.length - 1; i >= 0; i--) {
      if (this.changes[i].index <= index) return this.changes[i].configuration;
    }
    return this.base;
  }

  record(index: number, configuration: Configuration): void {
    this.truncateAfter(index - 1);
    this.changes.push({ index, configuration });
  }

  /** Forgets Config entries above `index`; true if the latest configuration changed. */
  truncateAfter(index: number): boolean {
    const before = this.changes.length;
    while (this.changes.length > 0 && this.changes[this.changes.length - 1].index > index) this.changes.pop();
    return this.changes.length !== before;
  }

  compact(index: number): void {
    this.base = this.at(index);
    this.changes = this.changes.filter((c) => c.index > index);
  }

  reset(base: Configuration): void {
    this.base = base;
    this.changes = [];
  }
}
