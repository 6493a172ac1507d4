-- wrk script: PATCH /metadata/<co>/<org>/<tId>?token=... with one configured field and one other, over
-- the calls listed in $BENCH_CALL_IDS (a file of call ids, one a line) taken in turn, so concurrent
-- requests change different calls; the values change with every request. wrk.path is
-- /metadata/<co>/<org>/.
local ids = {}
local n = 0

function init(args)
  for line in io.lines(os.getenv("BENCH_CALL_IDS")) do
    if line ~= "" then ids[#ids + 1] = line end
  end
  if #ids == 0 then error("no call ids in " .. os.getenv("BENCH_CALL_IDS")) end
  query = "?token=" .. os.getenv("BENCH_TOKEN")
end

local priorities = {"low", "normal", "high", "urgent"}

function request()
  n = n + 1
  local body = string.format('{"priority":"%s","note":"checked %d"}', priorities[n % 4 + 1], n)
  return wrk.format("PATCH", wrk.path .. ids[n % #ids + 1] .. query,
    {["Content-Type"] = "application/json"}, body)
end
