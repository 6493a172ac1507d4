-- wrk script: GET with a bearer token.
wrk.method = "GET"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("BENCH_TOKEN")
