"""Faults across containers, after the quick start (whose company, folder and application it uses):
while calls are uploaded, events tracked, tokens asked for and recordings sent for transcription with a
callback, each service container is killed and started again, RabbitMQ and PostgreSQL are restarted,
the analytics worker is cut off its network for 20 s, and the transcription workers are scaled to
three. Then nothing answered as accepted may be lost or doubled: every call answered is stored, found
by search once and scored; every event answered stored is read back once; every answered token works;
every accepted transcription's callback arrives. The counts are printed."""

import json
import os
import random
import re
import subprocess
import threading
import time
import urllib.parse
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from stack import (ANALYTICS, CLIP, DOCKER, PROJECT, WORK, all_healthy, compose, eventually, fail,
                   ingest_urls, multipart, request, step, token)

RECEIVER_PORT = 35980
stop = threading.Event()


def container(service):
    ids = compose("ps", "-q", service).split()
    if not ids:
        fail(f"no container for {service}")
    return ids[0]


def docker(*args):
    run = subprocess.run([DOCKER, *args], capture_output=True, text=True)
    if run.returncode != 0:
        fail(f"docker {' '.join(args)}: {run.stderr.strip()}")


def healthy_again(what, load):
    """Waits for every container to be healthy, then points the event load at the ingest replicas as
    published now (a restarted replica may get another port of INGEST_PORTS)."""
    started = time.time()
    eventually(f"every container healthy after {what}", all_healthy, limit=300)
    with load.lock:
        load.ingest = ingest_urls()
    step(f"{what}: healthy again in {time.time() - started:.0f} s")


class Load:
    """The answers each kind of load got, kept by its threads."""

    def __init__(self):
        self.lock = threading.Lock()
        self.calls = {}        # tId -> its word
        self.events = set()    # insert_id
        self.tokens = []
        self.requests = set()  # transcription request ids accepted with a callback
        self.callbacks = {}    # request id -> posts received
        self.unanswered = {"calls": 0, "events": 0, "tokens": 0}  # attempts refused or cut by the faults
        self.ingest = ingest_urls()  # the ingest replicas, taken in turn


def uploads(load, boot, access, run):
    company, org, folder = boot["company"], boot["organization"], boot["folder"]
    while not stop.is_set():
        word = f"w{uuid.uuid4().hex[:12]}"
        call = {"filename": "fault.wav", "datetime": "2026-11-20T11:00:00", "agent_id": "agent-9",
                "metadata": {"queue": run},
                "utterances": [{"speaker": "agent", "start": 0.5, "end": 3.0, "text": "thank you for calling"},
                               {"speaker": "client", "start": 3.5, "end": 6.0, "text": f"my invoice {word} is wrong"}]}
        form, ctype = multipart([("token", access), ("file", ("call.json", json.dumps(call).encode()))])
        status, body = request("POST", f"{ANALYTICS}/transcribe/{company}/{org}/{folder}", form, {"Content-Type": ctype})
        with load.lock:
            if status == 200:
                load.calls[json.loads(body)["tId"]] = word
            else:
                load.unanswered["calls"] += 1
        time.sleep(0.05)


def tracking(load, boot, run):
    seq = 0
    while not stop.is_set():
        batch = []
        for _ in range(5):
            seq += 1
            batch.append({"event_name": f"fault-{run}", "user_id": f"u-{seq % 7}", "insert_id": f"{run}-{seq}",
                          "event_timestamp_epoch": int(time.time() * 1000), "seq": str(seq)})
        with load.lock:
            ingest = load.ingest[seq % len(load.ingest)]
        status, body = request("POST", f"{ingest}/v3/{boot['app_key']}/track",
                               urllib.parse.quote(json.dumps({"events": batch})).encode(),
                               {"Content-Type": "application/x-www-form-urlencoded"})
        with load.lock:
            if status == 200 and json.loads(body).get("status") is True:
                load.events.update(e["insert_id"] for e in batch)
            else:
                load.unanswered["events"] += 1
        time.sleep(0.1)


def tokens(load, boot):
    while not stop.is_set():
        access = token(boot)
        with load.lock:
            if access:
                load.tokens.append(access)
            else:
                load.unanswered["tokens"] += 1
        time.sleep(0.2)


def transcriptions(load, access, gateway):
    with open(CLIP, "rb") as f:
        clip = f.read()
    n = 0
    while not stop.is_set() and n < 12:
        n += 1
        callback = f"http://{gateway}:{RECEIVER_PORT}/callback/{n}"
        form, ctype = multipart([("token", access), ("callback", callback), ("file", ("clip.wav", clip))])
        status, body = request("POST", f"{ANALYTICS}/transcribe", form, {"Content-Type": ctype})
        if status in (200, 202):
            with load.lock:
                load.requests.add(json.loads(body)["requestid"])
        time.sleep(3)


def receiver(load):
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            # multipart/form-data: the text field `requestid`.
            found = re.search(rb'name="requestid"\r\n\r\n([^\r]+)\r\n', body)
            rid = found.group(1).decode() if found else None
            with load.lock:
                load.callbacks[rid] = load.callbacks.get(rid, 0) + 1
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("0.0.0.0", RECEIVER_PORT), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main():
    with open(os.path.join(WORK, "bootstrap.json")) as f:
        boot = json.load(f)
    access = token(boot)
    if not access:
        fail("no token to start the load with")
    run = uuid.uuid4().hex[:8]
    network = f"{PROJECT}_default"
    gateway = subprocess.run([DOCKER, "network", "inspect", network, "--format", "{{(index .IPAM.Config 0).Gateway}}"],
                             capture_output=True, text=True).stdout.strip()
    load = Load()
    server = receiver(load)
    threads = [threading.Thread(target=uploads, args=(load, boot, access, run)) for _ in range(2)]
    threads += [threading.Thread(target=tracking, args=(load, boot, run)),
                threading.Thread(target=tokens, args=(load, boot)),
                threading.Thread(target=transcriptions, args=(load, access, gateway))]
    for t in threads:
        t.start()
    try:
        time.sleep(5)
        for service in ("analytics", "ingest", "auth", "admin", "analytics-worker", "analytics-transcriber"):
            docker("kill", container(service))
            time.sleep(2)
            compose("up", "-d", "--no-build", "--no-recreate", service)
            healthy_again(f"{service} killed and started", load)
        for service in ("rabbitmq", "postgres"):
            docker("restart", container(service))
            healthy_again(f"{service} restarted", load)
        worker = container("analytics-worker")
        docker("network", "disconnect", network, worker)
        time.sleep(20)
        docker("network", "connect", network, worker)
        healthy_again("analytics-worker cut off its network for 20 s", load)
        compose("up", "-d", "--no-build", "--no-recreate", "--scale", "analytics-transcriber=3", "--scale", "ingest=2")
        healthy_again("analytics-transcriber scaled to 3 and ingest to 2", load)
        if len(load.ingest) != 2:
            fail(f"two ingest replicas published, found {load.ingest}")
        time.sleep(5)
    finally:
        stop.set()
        for t in threads:
            t.join()
    step(f"load stopped: {len(load.calls)} calls, {len(load.events)} events, {len(load.tokens)} tokens and "
         f"{len(load.requests)} transcriptions with a callback answered as accepted; refused or cut by the "
         f"faults: {load.unanswered['calls']} uploads, {load.unanswered['events']} batches, "
         f"{load.unanswered['tokens']} token requests")
    check(load, boot, access, run)
    server.shutdown()


def check(load, boot, access, run):
    company, org = boot["company"], boot["organization"]
    t = urllib.parse.urlencode({"token": access})

    def scored(tid):
        status, body = request("GET", f"{ANALYTICS}/appmatches/{company}/{org}/{tid}?{t}")
        return status == 200 and "support" in json.loads(body).get("scorecard", {})

    def found_once(tid, word):
        q = urllib.parse.urlencode({"token": access, "q": word})
        status, body = request("GET", f"{ANALYTICS}/search/{company}/{org}?{q}")
        hits = json.loads(body).get("hits", []) if status == 200 else []
        return [h.get("tId") for h in hits] == [tid]

    pending = dict(load.calls)

    def calls_settled():
        for tid, word in list(pending.items()):
            if scored(tid) and found_once(tid, word):
                del pending[tid]
        return (not pending, f"{len(pending)} not yet stored, searchable once and scored, e.g. {list(pending)[:3]}")

    eventually("every answered call stored, found once by search and scored", calls_settled, limit=240)

    def events_read():
        seen = {}
        cursor = ""
        while True:
            q = urllib.parse.urlencode({"event_name": f"fault-{run}", "limit": 1000, "cursor": cursor})
            status, body = request("GET", f"{load.ingest[0]}/v3/{boot['app_key']}/events?{q}",
                                   headers={"Authorization": f"Bearer {access}"})
            if status != 200:
                return (False, (status, body[:200]))
            page = json.loads(body)
            for e in page["events"]:
                key = (e.get("properties") or {}).get("insert_id") or e.get("insert_id") or \
                    f"{run}-{(e.get('properties') or {}).get('seq')}"
                seen[key] = seen.get(key, 0) + 1
            cursor = page.get("next_cursor")
            if not cursor:
                break
        missing = load.events - set(seen)
        doubled = [k for k, n in seen.items() if n > 1]
        return (not missing and not doubled, f"{len(missing)} missing, {len(doubled)} doubled")

    eventually("every answered event read back once", events_read, limit=120)

    sample = random.sample(load.tokens, min(20, len(load.tokens)))
    refused = [tok for tok in sample
               if request("GET", f"{ANALYTICS}/search/{company}/{org}?{urllib.parse.urlencode({'token': tok, 'q': 'x'})}")[0] != 200]
    if refused:
        fail(f"{len(refused)} of {len(sample)} answered tokens are refused")

    def callbacks_arrived():
        with load.lock:
            missing = load.requests - set(load.callbacks)
        return (not missing, f"{len(missing)} callbacks not received")

    eventually("every accepted transcription's callback received", callbacks_arrived, limit=300)
    step(f"calls: answered {len(load.calls)}, stored, searchable once and scored {len(load.calls)}; "
         f"events: answered {len(load.events)}, read back once {len(load.events)}; "
         f"tokens: answered {len(load.tokens)}, {len(sample)} of them tried and accepted; "
         f"callbacks: accepted {len(load.requests)}, received {len(load.requests)} "
         f"({sum(load.callbacks.values())} posts); 0 lost, 0 doubled")


main()
