"""The quick start of deploy/README.md against the stack scripts/compose-test started: every container
running and healthy, `docker-compose run --rm bootstrap`, a client-credentials token, a call uploaded that
becomes searchable and scored, a LibriVox clip transcribed by the transcription workers, an event tracked
and read back. Exits non-zero, saying which step failed, at the first that does."""

import base64
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

PROJECT = os.environ["COMPOSE_TEST_PROJECT"]
ENV_FILE = os.environ["COMPOSE_TEST_ENV"]
DOCKER = os.environ.get("DOCKER", "docker")
AUTH, ANALYTICS, INGEST = "http://127.0.0.1:8081", "http://127.0.0.1:8083", "http://127.0.0.1:8084"
CLIP = "/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0880.wav"


def step(text):
    print(f"compose-test: {text}", flush=True)


def fail(text):
    print(f"compose-test: FAILED: {text}", file=sys.stderr, flush=True)
    sys.exit(1)


def compose(*args):
    run = subprocess.run(["docker-compose", "--project-name", PROJECT, "--env-file", ENV_FILE, *args],
                         capture_output=True, text=True)
    if run.returncode != 0:
        fail(f"docker-compose {' '.join(args)}: {run.stderr.strip()[-800:]}")
    return run.stdout


def request(method, url, body=None, headers=None):
    """(status, body bytes); a connection that fails is status 0."""
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except (urllib.error.URLError, ConnectionError, TimeoutError) as e:
        return 0, str(e).encode()


def multipart(fields):
    """A multipart/form-data body of (name, value or (file name, bytes)) pairs, and its content type."""
    boundary = uuid.uuid4().hex
    out = b""
    for name, value in fields:
        if isinstance(value, tuple):
            filename, data = value
            out += (f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'
                    "Content-Type: application/octet-stream\r\n\r\n").encode() + data + b"\r\n"
        else:
            out += f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
    return out + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def eventually(what, probe, limit=180):
    """Polls `probe` until it gives a value; fails saying `what` after `limit` seconds."""
    deadline = time.time() + limit
    last = None
    while time.time() < deadline:
        last = probe()
        if last and last[0]:
            return last[0]
        time.sleep(1)
    fail(f"{what} within {limit} s (last: {last[1] if last else None})")


def containers():
    """(name, state, health) of every container of the project."""
    out = []
    for cid in compose("ps", "-q").split():
        run = subprocess.run([DOCKER, "inspect", "--format",
                              "{{.Name}} {{.State.Status}} {{if .State.Health}}{{.State.Health.Status}}{{end}}", cid],
                             capture_output=True, text=True)
        parts = run.stdout.split()
        out.append((parts[0].lstrip("/"), parts[1], parts[2] if len(parts) > 2 else ""))
    return out


def all_healthy():
    states = containers()
    waiting = [s for s in states if s[1] != "running" or s[2] not in ("", "healthy")]
    return (not waiting and len(states) >= 11, waiting)


def main():
    started = time.time()
    eventually("every container running and healthy", all_healthy, limit=420)
    step(f"{len(containers())} containers healthy after {time.time() - started:.0f} s")

    boot = json.loads(compose("run", "--rm", "bootstrap"))
    company, org, folder = boot["company"], boot["organization"], boot["folder"]
    step(f"bootstrapped company {company}, folder {org}/{folder}")

    basic = base64.b64encode(f"{boot['client_id']}:{boot['client_secret']}".encode()).decode()
    status, body = request("POST", f"{AUTH}/oauth/{company}/token", b"grant_type=client_credentials",
                           {"Authorization": f"Basic {basic}", "Content-Type": "application/x-www-form-urlencoded"})
    if status != 200:
        fail(f"token: {status} {body[:300]!r}")
    token = json.loads(body)["access_token"]
    step("client-credentials token issued")

    call = {"filename": "call-0001.wav", "datetime": "2026-11-20T10:15:00", "agent_id": "agent-7",
            "metadata": {"queue": "billing"},
            "utterances": [{"speaker": "agent", "start": 0.5, "end": 3.2, "text": "thank you for calling"},
                           {"speaker": "client", "start": 3.5, "end": 6.0, "text": "my invoice is wrong"}]}
    form, ctype = multipart([("token", token), ("file", ("call.json", json.dumps(call).encode()))])
    status, body = request("POST", f"{ANALYTICS}/transcribe/{company}/{org}/{folder}", form, {"Content-Type": ctype})
    if status != 200:
        fail(f"upload: {status} {body[:300]!r}")
    tid = json.loads(body)["tId"]
    step(f"call {tid} uploaded")

    q = urllib.parse.urlencode({"token": token, "q": "invoice"})

    def found():
        status, body = request("GET", f"{ANALYTICS}/search/{company}/{org}?{q}")
        return (status == 200 and tid.encode() in body, (status, body[:200]))

    eventually("the call found by search", found)
    step("the call is searchable")

    app = {"categories": {"Greeting": {"phrases": ["for calling"]},
                          "Billing": {"subcategories": {"Invoice": {"phrases": ["invoice", "-invoice & paid"]}}}}}
    t = urllib.parse.urlencode({"token": token})
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
    form, ctype = multipart([("token", token), ("output", "text"), ("file", ("clip.wav", clip))])
    status, body = request("POST", f"{ANALYTICS}/transcribe", form, {"Content-Type": ctype})
    if status != 200 or b"young man" not in body:
        fail(f"transcription of the LibriVox clip: {status} {body[:300]!r}")
    step(f"clip transcribed: {body.decode().strip()}")

    batch = {"events": [{"event_name": "signup", "user_id": "u-1", "event_timestamp_epoch": "2026-11-20T10:15:00",
                         "plan": "pro"}]}
    status, body = request("POST", f"{INGEST}/v3/{boot['app_key']}/track",
                           urllib.parse.quote(json.dumps(batch)).encode(),
                           {"Content-Type": "application/x-www-form-urlencoded"})
    if status != 200 or json.loads(body).get("results", {}).get("stored") != 1:
        fail(f"track: {status} {body[:300]!r}")

    def read_back():
        status, body = request("GET", f"{INGEST}/v3/{boot['app_key']}/events", headers={"Authorization": f"Bearer {token}"})
        return (status == 200 and b"signup" in body, (status, body[:200]))

    eventually("the tracked event read back", read_back)
    step("event tracked and read back")
    step(f"quick start passed in {time.time() - started:.0f} s")


main()
