// The event ring: the last EVENT_RING_SIZE user events in firing order, and the Lamport clock that
// numbers them. Same on every server: both change only by applying event.fire.
import type { Txn } from '../txn';
import { EVENTS, EVENT_RING_SIZE, EVENT_VERSION, type EventInput, type EventOut } from './event-records';

export interface EventTableDump {
  events: EventOut[];
  ltime: number;
}

export class EventTable {
  private ring: EventOut[] = [];
  private ltime = 0;

  /** Every kept event, oldest first (copies). */
  all(): EventOut[] {
    return this.ring.map((e) => ({ ...e }));
  }

  fire(input: EventInput, txn: Txn): EventOut {
    this.ltime += 1;
    const event: EventOut = { ...input, Version: EVENT_VERSION, LTime: this.ltime };
    this.ring.push(event);
    if (this.ring.length > EVENT_RING_SIZE) this.ring.splice(0, this.ring.length - EVENT_RING_SIZE);
    txn.bump(EVENTS);
    return { ...event };
  }

  dump(): EventTableDump {
    return { events: this.all(), ltime: this.ltime };
  }

  static load(dump: EventTableDump | undefined): EventTable {
    const t = new EventTable();
    t.ring = (dump?.events ?? []).map((e) => ({ ...e }));
    t.ltime = dump?.ltime ?? 0;
    return t;
  }

  invariants(): string[] {
    const problems: string[] = [];
    if (this.ring.length > EVENT_RING_SIZE) problems.push(`event ring holds ${this.ring.length} events`);
    for (let i = 1; i < this.ring.length; i++) {
      if (this.ring[i]!.LTime <= this.ring[i - 1]!.LTime) problems.push(`event ${this.ring[i]!.ID} is not after its predecessor`);
    }
    return problems;
  }
}
