-- Wraps another wrk script (BENCH_PACED_SCRIPT) and adds think time: each connection waits
-- BENCH_THINK_MS after an answer before it sends its next request. wrk leaves the wait out of the
-- latency it records. With it, 64 clients offer a load the machine can carry instead of driving both
-- systems to saturation, so the tail says what a write costs rather than how the two cores are shared.
dofile(os.getenv('BENCH_PACED_SCRIPT'))
local think = tonumber(os.getenv('BENCH_THINK_MS') or '0')
function delay() return think end
