-- PUT /v1/kv/bench/<8-digit key> with a 256-byte value, keys drawn from 100,000: the shape of the
-- etcd peer's put load (8 B key, 256 B value, 100k keyspace).
package.path = (os.getenv('BENCH_KV_DIR') or '.') .. '/?.lua;' .. package.path
local r = require('report')
local reqs = {}
function init(args)
  local val = string.rep('v', tonumber(os.getenv('VAL_SIZE') or '256'))
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16) % 100000)
  for i = 1, 2000 do
    reqs[i] = wrk.format('PUT', string.format('/v1/kv/bench/%08d', math.random(0, 99999)), nil, val)
  end
end
function request() return reqs[math.random(#reqs)] end
function done(summary, latency, requests) r.report(summary, latency) end
