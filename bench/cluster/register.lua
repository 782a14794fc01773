-- PUT /v1/catalog/register: a node with one service (~130 B), nodes drawn from 10,000, service
-- `bench` — the shape of the register load measured against Consul 1.4.5 in the research notes.
-- Reported by the etcd peer's common.lua, so both systems print the same fields (p999 included).
package.path = (os.getenv('BENCH_WRK_DIR') or '.') .. '/?.lua;' .. package.path
local r = require('common')
local reqs = {}
function init(args)
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16) % 100000)
  for i = 1, 2000 do
    local n = math.random(0, 9999)
    local body = string.format(
      '{"Node":"bench-%04d","Address":"10.1.%d.%d","Service":{"Service":"bench","Port":8080,"Tags":["v1"]}}',
      n, math.floor(n / 256), n % 256)
    reqs[i] = wrk.format('PUT', '/v1/catalog/register', nil, body)
  end
end
function request() return reqs[math.random(#reqs)] end
function done(summary, latency, requests) r.report(summary, latency) end
