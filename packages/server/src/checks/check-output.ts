// What a check reports (pure): Consul's cap on output size, and the status an HTTP answer means.
import type { CheckStatus } from './check-spec';

/** Consul keeps at most this many bytes of a check's output. */
export const OUTPUT_MAX_BYTES = 4096;

/** `output` cut to 4096 bytes, saying how much there was (Consul's suffix). */
export function capOutput(output: string): string {
  const bytes = Buffer.from(output, 'utf8');
  if (bytes.length <= OUTPUT_MAX_BYTES) return output;
  return `${bytes.subarray(0, OUTPUT_MAX_BYTES).toString('utf8')} ... (captured ${OUTPUT_MAX_BYTES} of ${bytes.length} bytes)`;
}

/** 2xx is passing, 429 (Too Many Requests) is warning, anything else is critical. */
export function statusOfHttpCode(code: number): CheckStatus {
  if (code >= 200 && code <= 299) return 'passing';
  if (code === 429) return 'warning';
  return 'critical';
}

export interface ProbeResult {
  status: CheckStatus;
  output: string;
}

/** The result of an HTTP check that got an answer: status line and the start of the body. */
export function httpProbeResult(method: string, url: string, code: number, reason: string, bodyPrefix: string): ProbeResult {
  return { status: statusOfHttpCode(code), output: capOutput(`HTTP ${method} ${url}: ${code} ${reason} Output: ${bodyPrefix}`) };
}
