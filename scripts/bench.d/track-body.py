#!/usr/bin/env python3
"""Writes the body of one /track call of the ingestion benchmark: 300 events as the specification sends
them (the URL-encoded JSON object {"events": [...]}), with real user agents, addresses and a few custom
properties. Usage: track-body.py <file> [events]"""
import json
import sys
import time
import urllib.parse

AGENTS = [
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1.1 Safari/605.1.15",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1.1 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.81 Mobile Safari/537.36",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.2903.86",
]


def main():
    path = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    now = int(time.time() * 1000)
    events = [
        {
            "event_name": ["page_view", "call_started", "call_ended", "signup"][i % 4],
            "user_id": f"user-{i % 97}",
            "event_timestamp_epoch": now - 60_000 + i,
            "session_dua": AGENTS[i % len(AGENTS)],
            "session_ip": f"81.2.69.{i % 250}",
            "plan": "pro",
            "queue": "billing",
            "page": f"/pricing/{i % 13}",
            "duration": i * 7,
        }
        for i in range(count)
    ]
    body = urllib.parse.quote(json.dumps({"events": events}, separators=(",", ":")), safe="")
    with open(path, "w") as f:
        f.write(body)


main()
