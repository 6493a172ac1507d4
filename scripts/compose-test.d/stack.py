"""What the compose test's scenarios share: docker-compose on the test's project, HTTP requests,
multipart bodies, polling, and the containers' health."""

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
WORK = os.environ["COMPOSE_TEST_WORK"]
AUTH, ANALYTICS = "http://127.0.0.1:8081", "http://127.0.0.1:8083"
# A LibriVox clip of pocketsphinx-testdata: "he was not an ill disposed young man".
CLIP = "/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0880.wav"


def step(text):
    print(f"compose-test: {text}", flush=True)


def fail(text):
    print(f"compose-test: FAILED: {text}", file=sys.stderr, flush=True)
    sys.exit(1)


def compose(*args, required=True):
    """docker-compose on the test's project: its output; a failure fails the test, or, not `required`,
    is None."""
    run = subprocess.run(["docker-compose", "--project-name", PROJECT, "--env-file", ENV_FILE, *args],
                         capture_output=True, text=True)
    if run.returncode != 0:
        if not required:
            return None
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


def token(boot):
    """A client-credentials token of the bootstrap client."""
    basic = base64.b64encode(f"{boot['client_id']}:{boot['client_secret']}".encode()).decode()
    status, body = request("POST", f"{AUTH}/oauth/{boot['company']}/token", b"grant_type=client_credentials",
                           {"Authorization": f"Basic {basic}", "Content-Type": "application/x-www-form-urlencoded"})
    return json.loads(body)["access_token"] if status == 200 else None


def ingest_urls():
    """The address of each ingest replica, as published on the host (a port of INGEST_PORTS each)."""
    urls = []
    for index in range(1, 10):
        published = compose("port", "--index", str(index), "ingest", "8084", required=False)
        port = (published or "").strip().rpartition(":")[2]
        if not port.isdigit():
            break
        urls.append(f"http://127.0.0.1:{port}")
    return urls
