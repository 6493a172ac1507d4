-- wrk script: POST a client-credentials token request with HTTP Basic authentication.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
wrk.headers["Authorization"] = "Basic " .. os.getenv("BENCH_BASIC")
wrk.body = "grant_type=client_credentials"
