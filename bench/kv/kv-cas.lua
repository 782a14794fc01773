-- PUT /v1/kv/cas/<unique key>?cas=0 (create-only compare-and-set) with a 256-byte value: every
-- request is a CAS that succeeds, so the rate is CAS writes per second.
package.path = (os.getenv('BENCH_KV_DIR') or '.') .. '/?.lua;' .. package.path
local r = require('report')
local prefix, n, val
function init(args)
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16) % 100000)
  prefix = string.format('%06d', math.random(0, 999999))
  n = 0
  val = string.rep('v', 256)
end
function request()
  n = n + 1
  return wrk.format('PUT', string.format('/v1/kv/cas/%s-%d?cas=0', prefix, n), nil, val)
end
function done(summary, latency, requests) r.report(summary, latency) end
