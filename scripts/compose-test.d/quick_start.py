"""The quick start of deploy/README.md against the stack scripts/compose-test started: every container
running and healthy, `docker-compose run --rm bootstrap`, a client-credentials token, a call uploaded that
becomes searchable and scored, a LibriVox clip transcribed by the transcription workers, an event tracked
and read back, and the admin signed in through a real browser, to the token service and to the web
console. Exits non-zero, saying which step failed,
at the first that does."""

import json
import os
import time
import urllib.parse

import browser
from stack import (ANALYTICS, CLIP, WORK, all_healthy, compose, containers, eventually, fail, ingest_urls,
                   multipart, request, step, token)


def main():
    started = time.time()
    eventually("every container running and healthy", all_healthy, limit=420)
    step(f"{len(containers())} containers healthy after {time.time() - started:.0f} s")

    boot = json.loads(compose("run", "--rm", "bootstrap"))
    with open(os.path.join(WORK, "bootstrap.json"), "w") as f:
        json.dump(boot, f)
    company, org, folder = boot["company"], boot["organization"], boot["folder"]
    step(f"bootstrapped company {company}, folder {org}/{folder}")

    access = token(boot)
    if not access:
        fail("no client-credentials token")
    step("client-credentials token issued")

    call = {"filename": "call-0001.wav", "datetime": "2026-11-20T10:15:00", "agent_id": "agent-7",
            "metadata": {"queue": "billing"},
            "utterances": [{"speaker": "agent", "start": 0.5, "end": 3.2, "text": "thank you for calling"},
                           {"speaker": "client", "start": 3.5, "end": 6.0, "text": "my invoice is wrong"}]}
    form, ctype = multipart([("token", access), ("file", ("call.json", json.dumps(call).encode()))])
    status, body = request("POST", f"{ANALYTICS}/transcribe/{company}/{org}/{folder}", form, {"Content-Type": ctype})
    if status != 200:
        fail(f"upload: {status} {body[:300]!r}")
    tid = json.loads(body)["tId"]
    step(f"call {tid} uploaded")

    q = urllib.parse.urlencode({"token": access, "q": "invoice"})

    def found():
        status, body = request("GET", f"{ANALYTICS}/search/{company}/{org}?{q}")
        return (status == 200 and tid.encode() in body, (status, body[:200]))

    eventually("the call found by search", found)
    step("the call is searchable")

    app = {"categories": {"Greeting": {"phrases": ["for calling"]},
                          "Billing": {"subcategories": {"Invoice": {"phrases": ["invoice", "-invoice & paid"]}}}}}
    t = urllib.parse.urlencode({"token": access})
    for method, path, body in (("PUT", f"/apps/{company}/support", app),
                               ("PUT", f"/config/{company}/{org}/{folder}", {"custom_meta": ["queue"], "apps": ["support"]})):
        status, answer = request(method, f"{ANALYTICS}{path}?{t}", json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
        if status != 200:
            fail(f"{method} {path}: {status} {answer[:300]!r}")

    def scored():
        status, body = request("GET", f"{ANALYTICS}/appmatches/{company}/{org}/{tid}?{t}")
        ok = status == 200 and json.loads(body).get("scorecard", {}).get("support", {}).get("Billing", {}).get("score") == 1
        return (ok, (status, body[:300]))

    eventually("the call scored by the application", scored)
    step("the call is scored")

    with open(CLIP, "rb") as f:
        clip = f.read()
    form, ctype = multipart([("token", access), ("output", "text"), ("file", ("clip.wav", clip))])
    status, body = request("POST", f"{ANALYTICS}/transcribe", form, {"Content-Type": ctype})
    if status != 200 or b"young man" not in body:
        fail(f"transcription of the LibriVox clip: {status} {body[:300]!r}")
    step(f"clip transcribed: {body.decode().strip()}")

    ingest = ingest_urls()[0]
    batch = {"events": [{"event_name": "signup", "user_id": "u-1", "event_timestamp_epoch": "2026-11-20T10:15:00",
                         "plan": "pro"}]}
    status, body = request("POST", f"{ingest}/v3/{boot['app_key']}/track",
                           urllib.parse.quote(json.dumps(batch)).encode(),
                           {"Content-Type": "application/x-www-form-urlencoded"})
    if status != 200 or json.loads(body).get("results", {}).get("stored") != 1:
        fail(f"track: {status} {body[:300]!r}")

    def read_back():
        status, body = request("GET", f"{ingest}/v3/{boot['app_key']}/events", headers={"Authorization": f"Bearer {access}"})
        return (status == 200 and b"signup" in body, (status, body[:200]))

    eventually("the tracked event read back", read_back)
    step("event tracked and read back")

    user_token = browser.sign_in(boot)
    status, body = request("GET", f"http://127.0.0.1:8082/admin/v1/users/{boot['admin_username']}",
                           headers={"Authorization": f"Bearer {user_token}"})
    if status != 200:
        fail(f"the signed-in admin reads its record: {status} {body[:300]!r}")
    step("the admin signed in through the browser and read its record at the administration API")
    browser.console_sign_in(boot)
    step("the admin signed in to the web console and saw the bootstrap folder")
    step(f"quick start passed in {time.time() - started:.0f} s")


main()
