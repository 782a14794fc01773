// User events (Consul's `consul event`): a name, an optional payload and filters saying which agents
// should act on it. Registry has no gossip, so events are replicated through Raft into a bounded
// ring that every server of the datacenter holds (docs/events.md says why).

/** Watch key of the event ring (event list reads block on it). */
export const EVENTS = 'events';

/** Events each server keeps, oldest dropped first (Consul's agent keeps the last 256). */
export const EVENT_RING_SIZE = 256;

/** The event version this server writes and understands (Consul's userEventMaxVersion). */
export const EVENT_VERSION = 1;

/** An event as fired through the API (ID made at the HTTP edge, Payload base64 or null). */
export interface EventInput {
  ID: string;
  Name: string;
  Payload: string | null;
  NodeFilter: string;
  ServiceFilter: string;
  TagFilter: string;
}

/** An event as the API shows it (Consul's api.UserEvent). */
export interface EventOut extends EventInput {
  Version: number;
  /** Lamport time: one more than the previous event's, replicated with the ring. */
  LTime: number;
}
