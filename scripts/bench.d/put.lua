-- wrk script: PUT of one user per wrk thread (run with as many threads as connections), each request
-- changing the user's first name and sending the ETag of the previous answer in If-Match, as a client
-- that updates a record does; the first request of a connection is a GET for the current ETag. Users
-- are $BENCH_USER_PREFIX1 .. $BENCH_USER_PREFIXn, with primary role $BENCH_ROLE; a stale ETag is
-- answered 412 and fails the run.
local next_id = 1

function setup(thread)
  thread:set("id", next_id)
  next_id = next_id + 1
end

function init(args)
  user = os.getenv("BENCH_USER_PREFIX") .. id
  role = os.getenv("BENCH_ROLE")
  etag = nil
  refused = false
  n = 0
end

function request()
  local auth = "Bearer " .. os.getenv("BENCH_TOKEN")
  if etag == nil then
    return wrk.format("GET", wrk.path .. user, {["Authorization"] = auth})
  end
  n = n + 1
  local body = string.format(
    '{"first_name":"Bench %d","last_name":"Writer","roles":{"primary_role":{"role":"%s"}}}', n, role)
  return wrk.format("PUT", wrk.path .. user, {
    ["Authorization"] = auth,
    ["Content-Type"] = "application/json",
    ["If-Match"] = etag,
  }, body)
end

function response(status, headers, body)
  if status >= 300 and not refused then
    -- The first refusal of each thread is shown, so a failed run says why.
    refused = true
    io.stderr:write(string.format("%s, If-Match %s: %d %s\n", user, tostring(etag), status, body))
  end
  -- The baseline handler sends no ETag: any value then lets the PUTs start.
  etag = headers["etag"] or headers["ETag"] or etag or 'W/"0"'
end
