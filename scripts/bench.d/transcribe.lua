-- wrk script: POST /transcribe/... multipart uploads of transcript JSON files, as a client adding calls.
-- The form carries the token ($BENCH_TOKEN) and one of the files $BENCH_TRANSCRIPTS/call-0001.json,
-- call-0002.json, ... (scripts/bench.d/transcripts.py), taken in turn; the requests are built once, at
-- start. With $BENCH_CALLS set, each thread sends that many uploads (the sum over threads is the number
-- of calls added), then only GET /healthz until its uploads are all answered, and stops.
local boundary = "----speech-bench-7d4f1c"
local requests = {}
local next_request = 0
local limit = tonumber(os.getenv("BENCH_CALLS") or "")
local sent, answered = 0, 0
local checked = false
local filler

function init(args)
  local dir = os.getenv("BENCH_TRANSCRIPTS")
  local token = os.getenv("BENCH_TOKEN")
  local headers = {["Content-Type"] = "multipart/form-data; boundary=" .. boundary}
  local n = 1
  while true do
    local f = io.open(string.format("%s/call-%04d.json", dir, n), "rb")
    if f == nil then break end
    local json = f:read("*a")
    f:close()
    local body = "--" .. boundary .. "\r\n" ..
      'Content-Disposition: form-data; name="token"\r\n\r\n' .. token .. "\r\n" ..
      "--" .. boundary .. "\r\n" ..
      string.format('Content-Disposition: form-data; name="file"; filename="call-%04d.json"\r\n', n) ..
      "Content-Type: application/json\r\n\r\n" .. json .. "\r\n" ..
      "--" .. boundary .. "--\r\n"
    requests[n] = wrk.format("POST", wrk.path, headers, body)
    n = n + 1
  end
  if #requests == 0 then error("no transcripts in " .. tostring(dir)) end
  filler = wrk.format("GET", "/healthz")
end

function request()
  if limit ~= nil and sent >= limit then return filler end
  -- wrk calls request() once before connecting, to check the script; that one is never sent.
  if checked then sent = sent + 1 else checked = true end
  next_request = next_request % #requests + 1
  return requests[next_request]
end

function response(status, headers, body)
  if limit == nil then return end
  -- An upload is answered with its tId, or with an error; GET /healthz with neither.
  if status ~= 200 or body:find('"tId"', 1, true) then
    answered = answered + 1
    if status ~= 200 then io.stderr:write(string.format("upload answered %d: %s\n", status, body)) end
    if answered >= limit then wrk.thread:stop() end
  end
end
