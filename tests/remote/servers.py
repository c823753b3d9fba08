#!/usr/bin/python3
"""The remote tests' servers, on 127.0.0.1 only: s3rver (tests/remote/s3server.js, run by node),
nginx, and two fault-injecting proxies of the tests' own (one before each). Usage:

    servers.py STATE_DIR -- COMMAND [ARGS...]

starts them on free ports with their state under STATE_DIR (made anew), seeds both with
tests/data/compat, runs COMMAND with these variables set, stops every server when it ends (also on
failure, a signal, or this script's own death: the children get SIGKILL then), and exits with
COMMAND's status:

    RECIO_TEST_S3        http://127.0.0.1:PORT of s3rver (buckets data, public, scratch)
    RECIO_TEST_S3_DIR    s3rver's directory (the tests look there for orphaned upload parts)
    RECIO_TEST_HTTP      http://127.0.0.1:PORT of nginx, serving RECIO_TEST_WWW
    RECIO_TEST_HTTPS     https://127.0.0.1:PORT of the same nginx, with a self-signed certificate for
                         127.0.0.1 made here by openssl (unset, with RECIO_TEST_HTTPS_SKIP saying why,
                         when openssl cannot make one)
    RECIO_TEST_CA        that certificate (PEM): the CA bundle a client must trust for RECIO_TEST_HTTPS
    RECIO_TEST_WWW       nginx's document root (compat/ holds the golden files)
    RECIO_TEST_NGINX_LOG nginx's access log, a line per request: "CONNECTION METHOD PATH?QUERY" (the
                         connection's serial number: the tests count the connections a client made)
    RECIO_TEST_PROXY_S3  the fault proxy before s3rver      RECIO_TEST_PROXY_HTTP  before nginx

The proxies forward every request unchanged (each answer passed on as it comes) unless told otherwise by GET /__proxy/set?FIELD=VALUE...
(each call replaces the previous faults and zeroes the counters; GET /__proxy/stats gives them as
JSON). Faults apply to the requests whose path contains `match` and whose method is in `methods`:
    delay_ms=N          wait N ms before forwarding each request
    status=S count=K [retry_after=SEC]   answer the first K with status S (and Retry-After)
    cut=K               send the first K 2xx bodies half-way, then close the connection
    reset=K             close the first K connections without an answer
    replace_after=K     after K answered GETs the object "changes": later bodies have every byte
                        inverted and the ETag "replaced"; If-Match with another ETag gets 412,
                        unless ignore_if_match=1 (a server that ignores If-Match)
    replace_from=N      the same for the GETs whose Range starts at byte N or later, from the start
    delay_first_ms=N    wait N ms before forwarding the GETs whose Range starts at byte 0 (with
                        replace_from: two ranges asked together, the later one answered first, from
                        the new object)
    watch=N             no fault: counts the GETs whose Range starts at byte N as they come
                        ("watched" in the stats: when a reader asked for a range, not when it ended)
The stats also list every upload part that came ("parts": [partNumber, bytes] in arrival order).
Nothing here ever connects anywhere but 127.0.0.1, and everything stops after RECIO_TEST_LIFETIME
seconds (default 1800) whatever happens."""
import ctypes
import http.client
import http.server
import json
import os
import shutil
import signal
import socket
import socketserver
import subprocess
import sys
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LIFETIME = float(os.environ.get("RECIO_TEST_LIFETIME", "1800"))
KEY, SECRET = "RECIOTESTKEY", "recio-test-secret/+="


def die_with_parent():
    """preexec_fn: the child gets SIGKILL when this script dies, however it dies."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, what, seconds=20):
    end = time.time() + seconds
    while time.time() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with status {proc.returncode} at start")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on 127.0.0.1:{port} within {seconds} s")


def start_s3(state, procs):
    d, portfile = os.path.join(state, "s3"), os.path.join(state, "s3.port")
    os.makedirs(d)
    log = open(os.path.join(state, "s3.log"), "wb")
    # s3rver's continuation tokens are DES-encrypted: OpenSSL 3 keeps DES in its legacy provider
    p = subprocess.Popen(["node", "--openssl-legacy-provider", os.path.join(HERE, "s3server.js"), d, portfile,
                          "data", "public", "scratch"],
                         stdin=subprocess.PIPE, stdout=log, stderr=log, preexec_fn=die_with_parent)
    procs.append(p)
    end = time.time() + 20
    while not os.path.exists(portfile):
        if p.poll() is not None or time.time() > end:
            raise RuntimeError("s3rver did not start: see " + os.path.join(state, "s3.log"))
        time.sleep(0.05)
    port = int(open(portfile).read())
    wait_port(port, p, "s3rver")
    return port, d


NGINX_CONF = """daemon off;
master_process off;
worker_processes 1;
pid {state}/nginx.pid;
error_log {state}/nginx.err warn;
events {{ worker_connections 256; }}
http {{
    log_format conn '$connection $request_method $request_uri';
    access_log {state}/nginx.access conn;
    client_body_temp_path {state}/nginx-tmp/body;
    proxy_temp_path {state}/nginx-tmp/proxy;
    fastcgi_temp_path {state}/nginx-tmp/fastcgi;
    uwsgi_temp_path {state}/nginx-tmp/uwsgi;
    scgi_temp_path {state}/nginx-tmp/scgi;
    keepalive_requests 100000;
    sendfile on;
    server {{
        listen 127.0.0.1:{port};
        {tls}
        root {www};
        location / {{ }}
    }}
}}
"""
# The TLS listener, when a certificate was made: the same files over HTTPS.
NGINX_TLS = """listen 127.0.0.1:{port} ssl;
        ssl_certificate {crt};
        ssl_certificate_key {key};
        ssl_protocols TLSv1.2 TLSv1.3;"""


def make_cert(state):
    """A self-signed certificate for 127.0.0.1 (its own CA), or (None, why)."""
    crt, key = os.path.join(state, "tls.crt"), os.path.join(state, "tls.key")
    if not shutil.which("openssl"):
        return None, "openssl is missing (apt-get install openssl, or make remote-deps as root)"
    r = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
                        "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", crt],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if r.returncode != 0:
        return None, "openssl could not make a certificate: " + r.stderr.decode(errors="replace").strip()[-200:]
    return (crt, key), None


def start_nginx(state, procs, cert=None):
    """nginx on a free port (and, with cert, HTTPS on another): (port, tls_port or None, www)."""
    www = os.path.join(state, "www")
    os.makedirs(www)
    os.makedirs(os.path.join(state, "nginx-tmp"))
    for attempt in range(5):
        port, tls_port = free_port(), free_port() if cert else None
        tls = NGINX_TLS.format(port=tls_port, crt=cert[0], key=cert[1]) if cert else ""
        conf = os.path.join(state, "nginx.conf")
        with open(conf, "w") as f:
            f.write(NGINX_CONF.format(state=state, port=port, www=www, tls=tls))
        p = subprocess.Popen(["nginx", "-p", state, "-c", conf, "-e", os.path.join(state, "nginx.err")],
                             stdout=subprocess.DEVNULL, stderr=open(os.path.join(state, "nginx.log"), "wb"),
                             preexec_fn=die_with_parent)
        try:
            wait_port(port, p, "nginx")
            if tls_port:
                wait_port(tls_port, p, "nginx (https)")
            procs.append(p)
            return port, tls_port, www
        except RuntimeError:
            if p.poll() is None:
                p.kill()
            p.wait()
    raise RuntimeError("nginx did not start: see " + os.path.join(state, "nginx.err"))


class Faults:
    FIELDS = {"delay_ms": 0, "status": 0, "count": 0, "retry_after": -1, "cut": 0, "reset": 0,
              "replace_after": -1, "ignore_if_match": 0, "replace_from": -1, "delay_first_ms": 0, "watch": -1}

    def __init__(self):
        self.lock = threading.Lock()
        self.set({})

    def set(self, q):
        with self.lock:
            for k, v in self.FIELDS.items():
                setattr(self, k, int(q.get(k, [v])[0]))
            self.match = q.get("match", [""])[0]
            self.methods = q.get("methods", ["GET,HEAD,PUT,POST,DELETE"])[0].split(",")
            self.stats = {"requests": 0, "faults": 0, "gets": 0, "if_match": 0, "auth": 0, "watched": 0, "methods": {},
                          "parts": []}

    def take(self, field):
        """One use of a counted fault: True while some remain."""
        with self.lock:
            left = getattr(self, field)
            if left > 0:
                setattr(self, field, left - 1)
                self.stats["faults"] += 1
                return True
            return False


def make_proxy(upstream_port):
    faults = Faults()

    class Proxy(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = 60

        def log_message(self, *args):
            pass

        def answer(self, status, body, headers=(), length=None):
            self.send_response(status)
            for k, v in headers:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body) if length is None else length))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def control(self):
            u = urllib.parse.urlsplit(self.path)
            if u.path == "/__proxy/set":
                faults.set(urllib.parse.parse_qs(u.query))
                return self.answer(200, b"ok\n")
            with faults.lock:
                body = json.dumps(faults.stats).encode()
            self.answer(200, body, [("Content-Type", "application/json")])

        def handle_any(self):
            if self.path.startswith("/__proxy/"):
                return self.control()
            n = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(n) if n else b""
            hit = faults.match in self.path and self.command in faults.methods
            with faults.lock:
                st = faults.stats
                st["requests"] += 1
                st["methods"][self.command] = st["methods"].get(self.command, 0) + 1
                st["if_match"] += "If-Match" in self.headers
                st["auth"] += "Authorization" in self.headers
                st["watched"] += self.command == "GET" and faults.watch >= 0 and self.range_start() == faults.watch
                part = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query).get("partNumber")
                if self.command == "PUT" and part:
                    st["parts"].append([int(part[0]), n])
            if hit and faults.delay_ms:
                time.sleep(faults.delay_ms / 1000)
            if hit and faults.delay_first_ms and self.range_start() == 0:
                time.sleep(faults.delay_first_ms / 1000)
            if hit and faults.take("reset"):
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\0\0\0\0\0\0\0")
                self.close_connection = True
                return
            if hit and faults.take("count"):
                h = [("Retry-After", str(faults.retry_after))] if faults.retry_after >= 0 else []
                return self.answer(faults.status, b"<Error><Code>SlowDown</Code></Error>", h)
            self.forward(body, hit)

        def forward(self, body, hit):
            c = http.client.HTTPConnection("127.0.0.1", upstream_port, timeout=60)
            headers = {k: v for k, v in self.headers.items()}
            replacing = faults.replace_after >= 0 or faults.replace_from >= 0
            want = self.headers.get("If-Match") if hit and replacing else None  # judged below
            c.request(self.command, self.path, body=body, headers=headers)
            r = c.getresponse()
            out = [(k, v) for k, v in r.getheaders() if k.lower() not in ("content-length", "connection", "keep-alive",
                                                                          "transfer-encoding", "server", "date")]
            if not (hit and (replacing or faults.cut > 0)) and r.getheader("Content-Length"):
                return self.stream(r, c, out)  # no fault changes the body: it goes on as it comes
            data = r.read()
            c.close()
            if hit and self.command in ("GET", "HEAD") and r.status < 300:
                with faults.lock:
                    faults.stats["gets"] += self.command == "GET"
                    gets = faults.stats["gets"]
                prior = gets - (self.command == "GET")  # GETs answered before this request
                start = self.range_start()
                if (faults.replace_after >= 0 and prior >= faults.replace_after) or \
                        (faults.replace_from >= 0 and start is not None and start >= faults.replace_from):
                    if want and not faults.ignore_if_match and want.strip('"') != "replaced":
                        return self.answer(412, b"<Error><Code>PreconditionFailed</Code></Error>")
                    data = bytes(b ^ 0xFF for b in data)
                    out = [(k, '"replaced"' if k.lower() == "etag" else v) for k, v in out]
            if hit and r.status < 300 and self.command == "GET" and len(data) > 1 and faults.take("cut"):
                self.send_response(r.status)
                for k, v in out:
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data[:len(data) // 2])
                self.wfile.flush()
                self.close_connection = True
                return
            head_length = r.getheader("Content-Length") if self.command == "HEAD" else None
            self.answer(r.status, data, out, head_length)

        def range_start(self):
            """The first byte of the request's Range ("bytes=N-M"), or None."""
            v = self.headers.get("Range") or ""
            return int(v[6:].split("-")[0]) if v.startswith("bytes=") and v[6:].split("-")[0].isdigit() else None

        def stream(self, r, c, out):
            """The upstream answer r passed on piece by piece (a proxy holding each answer whole adds the
            time of the whole transfer before the first byte, which no read-ahead can hide)."""
            self.send_response(r.status)
            for k, v in out:
                self.send_header(k, v)
            self.send_header("Content-Length", r.getheader("Content-Length"))
            self.end_headers()
            while self.command != "HEAD":
                piece = r.read1(1 << 18)
                if not piece:
                    break
                self.wfile.write(piece)
            c.close()

        do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = handle_any

    class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
        daemon_threads = True
        allow_reuse_address = True

        def handle_error(self, request, client_address):
            if not isinstance(sys.exc_info()[1], ConnectionError):  # a client that hung up: expected here
                super().handle_error(request, client_address)

    srv = Server(("127.0.0.1", 0), Proxy)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv.server_address[1]


def seed(s3_port, www):
    """tests/data/compat into nginx's root (compat/) and s3rver (data/compat/, public/compat/a.rec)."""
    src = os.path.join(ROOT, "tests", "data", "compat")
    shutil.copytree(src, os.path.join(www, "compat"))
    uploads = [(f, f"data/compat/{f}") for f in sorted(os.listdir(src))] + [("a.rec", "public/compat/a.rec")]
    for f, key in uploads:
        subprocess.run(["curl", "-sSf", "--aws-sigv4", "aws:amz:us-east-1:s3", "--user", f"{KEY}:{SECRET}",
                        "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD", "-T", os.path.join(src, f),
                        f"http://127.0.0.1:{s3_port}/{key}"], check=True, stdout=subprocess.DEVNULL)


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.exit("usage: servers.py STATE_DIR -- COMMAND [ARGS...]")
    state = os.path.abspath(sys.argv[1])
    shutil.rmtree(state, ignore_errors=True)
    os.makedirs(state)
    procs = []

    def stop(*_):
        raise SystemExit(124)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGALRM, stop)
    signal.alarm(int(LIFETIME))
    rc = 1
    try:
        s3_port, s3_dir = start_s3(state, procs)
        cert, no_tls = make_cert(state)
        http_port, tls_port, www = start_nginx(state, procs, cert)
        seed(s3_port, www)
        env = dict(os.environ, RECIO_TEST_S3=f"http://127.0.0.1:{s3_port}", RECIO_TEST_S3_DIR=s3_dir,
                   RECIO_TEST_HTTP=f"http://127.0.0.1:{http_port}", RECIO_TEST_WWW=www,
                   RECIO_TEST_NGINX_LOG=os.path.join(state, "nginx.access"),
                   RECIO_TEST_PROXY_S3=f"http://127.0.0.1:{make_proxy(s3_port)}",
                   RECIO_TEST_PROXY_HTTP=f"http://127.0.0.1:{make_proxy(http_port)}")
        if cert:
            env.update(RECIO_TEST_HTTPS=f"https://127.0.0.1:{tls_port}", RECIO_TEST_CA=cert[0])
        else:
            env["RECIO_TEST_HTTPS_SKIP"] = no_tls
        cmd = subprocess.Popen(sys.argv[3:], env=env, preexec_fn=die_with_parent)
        try:
            rc = cmd.wait()
        finally:
            if cmd.poll() is None:
                cmd.kill()
                cmd.wait()
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
    sys.exit(rc)


if __name__ == "__main__":
    main()
