-- PUT /v1/catalog/register of a random one of the N loaded nodes (N from BENCH_NODES), with the
-- service it was loaded with (`big` for the first 1,000, else app-<i mod 1000>) and a NodeMeta that
-- changes on every request: an identical re-registration is a no-op in the store and would not be
-- a write at all. The check registered at load time is left as it is.
package.path = (os.getenv('BENCH_KV_DIR') or '.') .. '/?.lua;' .. package.path
local r = require('report')
local nodes = tonumber(os.getenv('BENCH_NODES') or '1000')
local seq = 0
local tag = ''
function init(args)
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16) % 100000)
  tag = tostring(math.random(0, 999999))
end
function request()
  seq = seq + 1
  local i = math.random(0, nodes - 1)
  local svc = (i < 1000) and 'big' or string.format('app-%d', i % 1000)
  local body = string.format(
    '{"Node":"node-%06d","Address":"10.%d.%d.%d","NodeMeta":{"w":"%s-%d"},"Service":{"ID":"%s","Service":"%s","Port":8080}}',
    i, math.floor(i / 65536), math.floor(i / 256) % 256, i % 256, tag, seq, svc, svc)
  return wrk.format('PUT', '/v1/catalog/register', nil, body)
end
function done(summary, latency, requests) r.report(summary, latency) end
