-- wrk script: the baseline of the production search, Meilisearch asked directly for what the service's
-- Meilisearch adapter asks it for a GET /search/<co>/<org>?q=<words> (crates/common/src/search/meili.rs):
-- POST /indexes/<uid>/search with the organization's filter, the first 20 hits, the same attributes,
-- crop and highlight. The words are those of scripts/bench.d/search.lua, in the same turn.
-- Environment: MEILI_KEY, BENCH_MEILI_FILTER (the filter on the company's and organization's keys).
local queries = dofile("scripts/bench.d/search-queries.lua")
local n = 0
local headers = {}
local filter

function init(args)
  headers["Authorization"] = "Bearer " .. os.getenv("MEILI_KEY")
  headers["Content-Type"] = "application/json"
  -- A JSON string of the filter, whose values are quoted.
  filter = '"' .. os.getenv("BENCH_MEILI_FILTER"):gsub('\\', '\\\\'):gsub('"', '\\"') .. '"'
end

function request()
  n = n + 1
  local q = queries[n % #queries + 1]
  local body = '{"q":"' .. q .. '","filter":' .. filter .. ',"offset":0,"limit":20,'
    .. '"attributesToRetrieve":["id","folder","datetime","fields"],"matchingStrategy":"all",'
    .. '"attributesToCrop":["text"],"cropLength":30,"attributesToHighlight":["text"],'
    .. '"highlightPreTag":"\\ue000","highlightPostTag":"\\ue001"}'
  return wrk.format("POST", wrk.path, headers, body)
end
