"""Accepts OTLP/HTTP exports on 4318 and answers 200 with an empty body; 4317 (gRPC) and 13133 (health)
accept connections and answer nothing more. The arguments (the collector's --config) are ignored."""
import socketserver
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Sink(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


class Idle(socketserver.BaseRequestHandler):
    def handle(self):
        while self.request.recv(65536):
            pass


for port in (4317, 13133):
    server = socketserver.ThreadingTCPServer(("0.0.0.0", port), Idle)
    threading.Thread(target=server.serve_forever, daemon=True).start()
ThreadingHTTPServer(("0.0.0.0", 4318), Sink).serve_forever()
