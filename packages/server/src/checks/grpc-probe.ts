// gRPC checks (Consul's CheckGRPC): one call of the standard `grpc.health.v1.Health/Check` on the
// check's server, for its service, bounded by the timeout. SERVING is passing; any other answer,
// or any failure to call, is critical with Go's wording of the reason, which is what Consul shows.
// Like the other probes it never throws: a target grpc-js cannot parse is a critical result.
import type { Client, ServiceError } from '@grpc/grpc-js';
import type { CheckKind } from './check-spec';
import { capOutput, type ProbeResult } from './check-output';
import { decodeHealthResponse, encodeHealthRequest, HEALTH_CHECK_METHOD, SERVING_STATUS } from './grpc-health-codec';
import { MAX_TIMER_MS } from './long-timer';

type GrpcKind = Extract<CheckKind, { type: 'grpc' }>;

/** Consul's text for an answer other than SERVING. */
export const GRPC_UNHEALTHY = "gRPC application didn't report service healthy";

/** Go's names of gRPC codes (codes.Code.String()), as Consul's output has them. */
const GO_CODE_NAMES = ['OK', 'Canceled', 'Unknown', 'InvalidArgument', 'DeadlineExceeded', 'NotFound', 'AlreadyExists', 'PermissionDenied', 'ResourceExhausted', 'FailedPrecondition', 'Aborted', 'OutOfRange', 'Unimplemented', 'Internal', 'Unavailable', 'DataLoss', 'Unauthenticated'];

type GrpcJs = typeof import('@grpc/grpc-js');
let grpcJs: GrpcJs | undefined;

/** grpc-js is loaded by the first gRPC check: ~2 MiB of heap an agent without one need not hold (issue #30). */
function grpc(): GrpcJs {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  grpcJs ??= require('@grpc/grpc-js') as GrpcJs;
  return grpcJs;
}

const reasonOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

function rpcError(err: ServiceError): string {
  const code = GO_CODE_NAMES[err.code] ?? `Code(${err.code})`;
  return `rpc error: code = ${code} desc = ${err.details || err.message}`;
}

export function grpcProbe(kind: GrpcKind): Promise<ProbeResult> {
  return new Promise((resolve) => {
    let client: Client | undefined;
    let settled = false;
    const done = (r: ProbeResult) => {
      if (settled) return;
      settled = true;
      client?.close();
      resolve({ status: r.status, output: capOutput(r.output) });
    };
    try {
      if (kind.server === '') throw new Error('missing address');
      const { ChannelCredentials, Client, Metadata } = grpc();
      const creds = kind.useTls ? ChannelCredentials.createSsl(null, null, null, { rejectUnauthorized: !kind.tlsSkipVerify }) : ChannelCredentials.createInsecure();
      // One connection per run, as Consul dials per check: nothing is kept between runs.
      client = new Client(kind.server, creds, { 'grpc.max_receive_message_length': 64 * 1024 });
      const deadline = new Date(Date.now() + Math.min(kind.timeoutMs, MAX_TIMER_MS));
      client.makeUnaryRequest(
        HEALTH_CHECK_METHOD,
        (service: string) => encodeHealthRequest(service),
        (buf: Buffer) => decodeHealthResponse(buf),
        kind.service,
        new Metadata(),
        { deadline },
        (err, value) => {
          if (err) return done({ status: 'critical', output: rpcError(err) });
          if (value === SERVING_STATUS.indexOf('SERVING')) return done({ status: 'passing', output: `gRPC check ${kind.target}: success` });
          done({ status: 'critical', output: GRPC_UNHEALTHY });
        },
      );
    } catch (err) {
      done({ status: 'critical', output: `gRPC check ${kind.target}: ${reasonOf(err)}` });
    }
  });
}
