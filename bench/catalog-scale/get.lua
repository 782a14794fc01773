-- GET of wrk's URL with report.lua's RESULT line (latencies in ms).
package.path = (os.getenv('BENCH_KV_DIR') or '.') .. '/?.lua;' .. package.path
local r = require('report')
function done(summary, latency, requests) r.report(summary, latency) end
