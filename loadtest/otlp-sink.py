"""A do-nothing OTLP/HTTP receiver for benchmarks: answers 200 to every POST (spans and
metrics are read and dropped) and counts the bytes it got."""
import http.server
import sys


class Sink(http.server.BaseHTTPRequestHandler):
    received = 0

    def do_POST(self):
        n = int(self.headers.get("content-length", 0))
        Sink.received += len(self.rfile.read(n))
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Sink)
server.serve_forever()
