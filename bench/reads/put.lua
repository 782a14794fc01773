-- wrk: PUT /v1/kv/bench/<n> with a 64-byte value, a fresh key per request (spread over 10,000).
local counter = 0
local value = string.rep("v", 64)
request = function()
  counter = counter + 1
  return wrk.format("PUT", "/v1/kv/bench/" .. (counter % 10000), nil, value)
end
