// The two messages of the standard gRPC health service (grpc.health.v1), encoded by hand: each has
// one field, so a protobuf library would be more code to load than these few lines (pure).
//   message HealthCheckRequest  { string service = 1; }
//   message HealthCheckResponse { ServingStatus status = 1; }  UNKNOWN 0, SERVING 1, NOT_SERVING 2, SERVICE_UNKNOWN 3

export const HEALTH_CHECK_METHOD = '/grpc.health.v1.Health/Check';

export const SERVING_STATUS = ['UNKNOWN', 'SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN'] as const;

function varint(n: number): number[] {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return out;
}

/** Read a varint at `at`: its value and the offset after it (throws on a truncated or oversized one). */
function readVarint(buf: Buffer, at: number): [number, number] {
  let value = 0;
  let scale = 1;
  for (let i = at; i < buf.length && i < at + 10; i++) {
    const b = buf[i]!;
    value += (b & 0x7f) * scale;
    scale *= 128;
    if ((b & 0x80) === 0) return [value, i + 1];
  }
  throw new Error('malformed varint');
}

export function encodeHealthRequest(service: string): Buffer {
  if (service === '') return Buffer.alloc(0); // proto3 omits a default value
  const bytes = Buffer.from(service, 'utf8');
  return Buffer.concat([Buffer.from([0x0a, ...varint(bytes.length)]), bytes]);
}

export function decodeHealthRequest(buf: Buffer): string {
  let service = '';
  eachField(buf, (field, wire, value) => {
    if (field === 1 && wire === 2) service = (value as Buffer).toString('utf8');
  });
  return service;
}

export function encodeHealthResponse(status: number): Buffer {
  return status === 0 ? Buffer.alloc(0) : Buffer.from([0x08, ...varint(status)]);
}

/** The response's status number (0, UNKNOWN, when absent); unknown fields are skipped as protobuf says. */
export function decodeHealthResponse(buf: Buffer): number {
  let status = 0;
  eachField(buf, (field, wire, value) => {
    if (field === 1 && wire === 0) status = value as number;
  });
  return status;
}

/** Walk a message's fields; throws on what is not protobuf. */
function eachField(buf: Buffer, visit: (field: number, wire: number, value: number | Buffer) => void): void {
  let at = 0;
  while (at < buf.length) {
    const [key, next] = readVarint(buf, at);
    at = next;
    const field = Math.floor(key / 8);
    const wire = key % 8;
    if (wire === 0) {
      const [v, after] = readVarint(buf, at);
      at = after;
      visit(field, wire, v);
    } else if (wire === 2) {
      const [len, after] = readVarint(buf, at);
      if (after + len > buf.length) throw new Error('truncated field');
      visit(field, wire, buf.subarray(after, after + len));
      at = after + len;
    } else if (wire === 1 || wire === 5) {
      at += wire === 1 ? 8 : 4;
      if (at > buf.length) throw new Error('truncated field');
    } else {
      throw new Error(`unsupported wire type ${wire}`);
    }
  }
}
