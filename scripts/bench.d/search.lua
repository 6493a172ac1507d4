-- wrk script: GET /search/<co>/<org>?q=<words>&token=..., the words taken in turn from a list that mixes
-- words found in nearly every call of scripts/bench.d/transcripts.py, in some, and in few or none. wrk.path
-- is /search/<co>/<org>.
local queries = dofile("scripts/bench.d/search-queries.lua")
local n = 0

function init(args)
  suffix = "&token=" .. os.getenv("BENCH_TOKEN")
end

function request()
  n = n + 1
  local q = queries[n % #queries + 1]:gsub(" ", "+")
  return wrk.format("GET", wrk.path .. "?q=" .. q .. suffix)
end
