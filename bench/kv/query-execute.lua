-- GET /v1/query/bench-query/execute: a prepared query over a 100-instance service.
package.path = (os.getenv('BENCH_KV_DIR') or '.') .. '/?.lua;' .. package.path
local r = require('report')
function init(args) end
function request() return wrk.format('GET', '/v1/query/bench-query/execute') end
function done(summary, latency, requests) r.report(summary, latency) end
