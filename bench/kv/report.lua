-- One machine-readable RESULT line per wrk run (latencies in ms), the same fields as the etcd peer's.
local M = {}
function M.report(summary, latency)
  local s = summary.duration / 1e6
  local e = summary.errors
  local ok = summary.requests - e.status
  io.write(string.format(
    'RESULT label=%s requests=%d ok=%d non2xx=%d sock_err=%d rps=%.0f ok_rps=%.0f p50_ms=%.2f p99_ms=%.2f max_ms=%.2f\n',
    os.getenv('LABEL') or '-', summary.requests, ok, e.status, e.connect + e.read + e.write + e.timeout,
    summary.requests / s, ok / s, latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000))
end
return M
