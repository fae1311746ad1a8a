#!/usr/bin/env python3
"""hostile_debuginfod -- a debuginfod server that answers every request
with a debug file it says is 3 GiB (Content-Length) and then streams zeros
for as long as the client reads, paced at RATE MiB/s.

    hostile_debuginfod.py PORTFILE LOGFILE [RATE]     (default 8 MiB/s)

It listens on 127.0.0.1 on a free port, writes the port to PORTFILE, and
appends one line per request to LOGFILE when the client hangs up:
"GET /buildid/.../debuginfo sent N". A client without a size limit writes
what it gets into its cache until its own timeout (stacktop's: 30 s, so
~240 MiB at 8 MiB/s, 5.8 GB from a fast server in the issue); one that
honours DEBUGINFOD_MAXSIZE (2 GiB) refuses the file on its size. The pace
keeps a client without a limit from filling the disk of the machine the
test runs on.
"""
import http.server
import os
import socketserver
import sys
import time

ANNOUNCED = 3 << 30
CHUNK = 64 << 10


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        sent = 0
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(ANNOUNCED))
            self.end_headers()
            zeros = bytes(CHUNK)
            pause = CHUNK / (RATE * (1 << 20))
            while sent < ANNOUNCED:
                self.wfile.write(zeros)
                sent += CHUNK
                time.sleep(pause)
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass
        with open(LOG, "a") as f:
            f.write("GET %s sent %d\n" % (self.path, sent))
        self.close_connection = True


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: hostile_debuginfod.py PORTFILE LOGFILE [RATE]")
    LOG = sys.argv[2]
    RATE = float(sys.argv[3]) if len(sys.argv) > 3 else 8.0
    srv = Server(("127.0.0.1", 0), Handler)
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    srv.serve_forever()
