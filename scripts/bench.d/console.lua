-- wrk script: GET with the console's session cookie.
wrk.method = "GET"
wrk.headers["Cookie"] = "console_session=" .. os.getenv("BENCH_COOKIE")
