// The time module (issue #36). Two clocks, two uses, never mixed:
// - monotonicMs(): every duration, timeout, deadline, backoff, rate limit, blocking wait and TTL
//   timer. It only moves forward at the rate of real time, so a wall-clock step (NTP, a resumed
//   VM, a bad RTC) changes none of them. Only differences mean anything: never persist it, never
//   send it to another server — a budget travels as a remaining duration.
// - Date.now() / new Date(): only for timestamps people read (CreateTime, logs, certificate
//   validity, which Consul too takes from the leader's wall clock). test/time/wall-clock-uses.test.ts
//   lists every such use and fails on a new one.
export { monotonicMs } from '@registry/raft';
