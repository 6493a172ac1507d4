-- wrk script: POST /v3/<app_key>/track of one 300-event batch (scripts/bench.d/track-body.py, file
-- $BENCH_BODY), as a sender of tracking events. Every call answers 200: what was stored is counted in the
-- database afterwards.
local f = assert(io.open(os.getenv("BENCH_BODY"), "rb"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
