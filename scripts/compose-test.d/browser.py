"""A sign-in in a real browser: headless Chromium driven over WebDriver (chromedriver from Debian, spoken
to over its HTTP protocol) through the authorization-code flow of the token service, landing at a relying
party on the host at the bootstrap client's redirect address, http://localhost:3000/callback."""

import json
import socket
import subprocess
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from stack import fail, request

LANDED = b'<html><body><p id="done">back at the relying party</p></body></html>'


def relying_party(port):
    class Page(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(LANDED)))
            self.end_headers()
            self.wfile.write(LANDED)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class Browser:
    """One Chromium session of a chromedriver of its own."""

    def __init__(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.driver = subprocess.Popen(["chromedriver", f"--port={self.port}"],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            if request("GET", f"{self.base}/status")[0] == 200:
                break
            time.sleep(0.1)
        caps = {"capabilities": {"alwaysMatch": {"goog:chromeOptions": {
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]}}}}
        self.session = self.call("POST", "/session", caps)["sessionId"]

    @property
    def base(self):
        return f"http://127.0.0.1:{self.port}"

    def call(self, method, path, body=None):
        status, answer = request(method, f"{self.base}{path}", json.dumps(body or {}).encode() if method == "POST"
                                 else None, {"Content-Type": "application/json"})
        if status != 200:
            fail(f"WebDriver {method} {path}: {status} {answer[:300]!r}")
        return json.loads(answer)["value"]

    def goto(self, url):
        self.call("POST", f"/session/{self.session}/url", {"url": url})

    def find(self, css, wait=10):
        deadline = time.time() + wait
        while True:
            status, answer = request("POST", f"{self.base}/session/{self.session}/element",
                                     json.dumps({"using": "css selector", "value": css}).encode(),
                                     {"Content-Type": "application/json"})
            if status == 200:
                return next(iter(json.loads(answer)["value"].values()))
            if time.time() > deadline:
                fail(f"no element {css} at {self.url()}")
            time.sleep(0.2)

    def type(self, css, text):
        self.call("POST", f"/session/{self.session}/element/{self.find(css)}/value", {"text": text})

    def click(self, css):
        self.call("POST", f"/session/{self.session}/element/{self.find(css)}/click")

    def url(self):
        return self.call("GET", f"/session/{self.session}/url")

    def close(self):
        request("DELETE", f"{self.base}/session/{self.session}")
        self.driver.kill()
        self.driver.wait()


def sign_in(boot):
    """The bootstrap admin signs in through the browser; the code is exchanged for tokens. The access
    token, or a failure."""
    callback = boot["redirect_uri"]
    server = relying_party(urllib.parse.urlsplit(callback).port)
    browser = Browser()
    try:
        query = urllib.parse.urlencode({"client_id": boot["client_id"], "response_type": "code",
                                        "redirect_uri": callback, "state": "compose-1"})
        browser.goto(f"{boot['authorize_url']}?{query}")
        browser.type("#username", boot["admin_username"])
        browser.type("#password", boot["admin_password"])
        browser.click("button[type=submit]")
        browser.find("#done")
        landed = urllib.parse.urlsplit(browser.url())
    finally:
        browser.close()
        server.shutdown()
    params = dict(urllib.parse.parse_qsl(landed.query))
    if not landed.geturl().startswith(callback) or params.get("state") != "compose-1" or "code" not in params:
        fail(f"the browser landed at {landed.geturl()}")
    form = urllib.parse.urlencode({"grant_type": "authorization_code", "code": params["code"],
                                   "client_id": boot["client_id"], "client_secret": boot["client_secret"],
                                   "redirect_uri": callback}).encode()
    status, body = request("POST", boot["token_url"].replace("localhost", "127.0.0.1"), form,
                           {"Content-Type": "application/x-www-form-urlencoded"})
    if status != 200:
        fail(f"code exchange: {status} {body[:300]!r}")
    return json.loads(body)["access_token"]


def console_sign_in(boot):
    """The bootstrap admin opens the console at the address bootstrap printed, signs in at the token
    service and lands on the console's folders page, which lists the bootstrap folder."""
    browser = Browser()
    try:
        browser.goto(boot["console_url"])
        browser.type("#username", boot["admin_username"])
        browser.type("#password", boot["admin_password"])
        browser.click("button[type=submit]")
        folder = f"/console/{boot['company']}/{boot['organization']}/{boot['folder']}/"
        browser.find(f"ul.folders a[href='{folder}']", wait=20)
        landed = browser.url()
    finally:
        browser.close()
    if not landed.startswith(boot["console_url"]):
        fail(f"the console's sign-in landed at {landed}")
