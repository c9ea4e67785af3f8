#!/usr/bin/env python3
"""A JWT issuer on loopback for load tests: an RSA key made by openssl, its JWKS served at
http://127.0.0.1:PORT/jwks.json, and one RS256 access token for it (iss, aud, sub, an exp a
day ahead) printed on stdout as `TOKEN <jwt>`, then `JWKS <url>`; serves until killed.

Usage: python3 loadtest/lib/jwt_issuer.py ISSUER AUDIENCE   (ISSUER: the `iss` to put in)
"""

import base64
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
import time


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def main():
    issuer, audience = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp()
    key = os.path.join(work, "key.pem")
    subprocess.run(["openssl", "genrsa", "-out", key, "2048"], check=True, capture_output=True)
    modulus = subprocess.run(["openssl", "rsa", "-in", key, "-noout", "-modulus"], check=True, capture_output=True,
                             text=True).stdout.strip().split("=", 1)[1]
    n = bytes.fromhex(modulus)
    jwks = {"keys": [{"kty": "RSA", "kid": "load", "alg": "RS256", "use": "sig", "n": b64(n),
                      "e": b64((65537).to_bytes(3, "big"))}]}
    header = b64(json.dumps({"alg": "RS256", "kid": "load", "typ": "at+jwt"}).encode())
    now = int(time.time())
    claims = b64(json.dumps({"iss": issuer, "aud": audience, "sub": "load-tester", "iat": now,
                             "exp": now + 86400, "scope": "tools:call"}).encode())
    signing = f"{header}.{claims}".encode()
    sig = subprocess.run(["openssl", "dgst", "-sha256", "-sign", key], input=signing, check=True,
                         capture_output=True).stdout
    body = json.dumps(jwks).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(f"TOKEN {header}.{claims}.{b64(sig)}", flush=True)
    print(f"JWKS http://127.0.0.1:{server.server_address[1]}/jwks.json", flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    threading.Event().wait()


if __name__ == "__main__":
    main()
