#!/usr/bin/env python3
"""Figures of the service under hostile requests, against a real `mgds serve` on loopback.

Prints one table: for each kind of hostile request, what the service's process took (resident
memory, VmRSS and VmHWM from /proc), how big and how slow its answers were, and what an honest
user waited meanwhile. Run it against any build of `mgds` to compare builds:

    python3 tests/hardening/measure.py [--mgds target/debug/mgds]

It builds `mgds` (debug, as the review that found these measured it) with cargo unless `--mgds`
names one, and needs only Python's standard library.
"""

import argparse
import gzip
import http.client
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def memory(pid):
    """(VmRSS, VmHWM) of `pid` in MB."""
    values = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                values[key] = int(rest.split()[0]) // 1024
    return values["VmRSS"], values["VmHWM"]


class Service:
    """A running `mgds serve` over a fresh data folder."""

    def __init__(self, mgds, data):
        self.mgds, self.data = mgds, data
        self.proc = subprocess.Popen(
            [mgds, "serve", "--listen", "127.0.0.1:0", "--data-dir", data, "--no-demo"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        first = self.proc.stdout.readline().strip()
        self.url = first.removeprefix("listening on ")
        self.proc.stdout.readline()
        parsed = urllib.parse.urlparse(self.url)
        self.host, self.port = parsed.hostname, parsed.port

    def user(self, email):
        out = subprocess.run(
            [self.mgds, "admin", "--data-dir", self.data, "user", "create", email],
            check=True,
            capture_output=True,
            text=True,
        )
        return out.stdout.strip()

    def request(self, method, path, key=None, body=None, timeout=120):
        """(status, body bytes, seconds)."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        headers = {}
        data = None
        if key:
            headers["X-API-Key"] = key
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        started = time.monotonic()
        try:
            conn.putrequest(method, path, skip_accept_encoding=True)
            for k, v in headers.items():
                conn.putheader(k, v)
            if data is not None:
                conn.putheader("Content-Length", str(len(data)))
            conn.endheaders(data)
            r = conn.getresponse()
            payload = r.read()
            return r.status, payload, time.monotonic() - started
        except (http.client.HTTPException, OSError) as e:
            return 0, str(e).encode(), time.monotonic() - started
        finally:
            conn.close()

    def memory(self):
        return memory(self.proc.pid)

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def odd_methods(svc, rows):
    """1,000 requests, each with a different 60 KB method, to the S3 route that takes any method."""
    rss0, _ = svc.memory()
    for i in range(1000):
        method = f"X{i:04d}" + "M" * 60_000
        svc.request(method, "/mgds-uploads/samples/x/reads.fastq")
    rss1, hwm = svc.memory()
    status, body, took = svc.request("GET", "/metrics")
    rows.append(("1 metric labels", "1,000 requests with different 60 KB methods",
                 f"RSS {rss0} -> {rss1} MB (peak {hwm} MB); /metrics {len(body) / 1e6:.3f} MB in {took * 1000:.0f} ms"))


def huge_pair(svc, key, rows):
    """A pair of one 200 Mbp record per mate through init_multipart_upload, as the `onecodex`
    client sends a pair (two files, signed S3 PUTs): the callback's time, what became of the
    sample, and the service's peak."""
    import hashlib
    import hmac

    line = b"ACGTTGCAAGGCTTACGATCGATCGGATCCATGCATGCAAATTTGGGCCCTTAAGGCCAT\n"
    raw = b">huge one record\n" + line * (200_000_000 // 60)
    mate = gzip.compress(raw, compresslevel=1)
    status, body, _ = svc.request(
        "POST", "/api/v1/samples/init_multipart_upload", key,
        {"filename": "leak_R1.fasta.gz", "paired_end_filename": "leak_R2.fasta.gz"})
    init = json.loads(body)
    access, secret = init["upload_aws_access_key_id"], init["upload_aws_secret_access_key"]

    def put(object_key, payload):
        now = time.gmtime()
        amz_date = time.strftime("%Y%m%dT%H%M%SZ", now)
        day = amz_date[:8]
        region = "us-east-1"
        path = "/" + init["s3_bucket"] + "/" + urllib.parse.quote(object_key)
        host = f"{svc.host}:{svc.port}"
        payload_hash = hashlib.sha256(payload).hexdigest()
        canonical = "\n".join([
            "PUT", path, "", f"host:{host}", f"x-amz-content-sha256:{payload_hash}", f"x-amz-date:{amz_date}", "",
            "host;x-amz-content-sha256;x-amz-date", payload_hash])
        scope = f"{day}/{region}/s3/aws4_request"
        to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])
        k = ("AWS4" + secret).encode()
        for part in (day, region, "s3", "aws4_request"):
            k = hmac.new(k, part.encode(), hashlib.sha256).digest()
        signature = hmac.new(k, to_sign.encode(), hashlib.sha256).hexdigest()
        conn = http.client.HTTPConnection(svc.host, svc.port, timeout=120)
        conn.request("PUT", path, payload, {
            "Host": host,
            "x-amz-date": amz_date,
            "x-amz-content-sha256": payload_hash,
            "Authorization": f"AWS4-HMAC-SHA256 Credential={access}/{scope}, "
                             f"SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature={signature}",
        })
        r = conn.getresponse()
        r.read()
        conn.close()
        return r.status

    assert put(init["file_id"], mate) == 200
    assert put(init["paired_end_file_id"], mate) == 200
    _, before = svc.memory()
    callback = {"s3_path": f"s3://{init['s3_bucket']}/{init['file_id']}"}
    status, body, took = svc.request("POST", init["callback_url"], key, callback, timeout=600)
    sample = json.loads(body).get("sample_id") if status == 200 else None
    outcome = f"callback {status} in {took * 1000:.0f} ms"
    deadline = time.monotonic() + 120
    while sample and time.monotonic() < deadline:
        _, s, _ = svc.request("GET", f"/api/v1/samples/{sample}", key)
        s = json.loads(s)
        if s.get("error_msg") or s.get("visibility") == "private":
            outcome += f"; sample {s.get('visibility')}: {(s.get('error_msg') or '')[:70]}"
            break
        time.sleep(0.2)
    _, after = svc.memory()
    rows.append(("2 pair callback", f"pair of 200 Mbp records ({len(mate) / 1e6:.1f} MB gzip each)",
                 f"{outcome}; service peak {before} -> {after} MB"))


def many_tags(svc, key, other, rows):
    """A pre-upload with 100,000 tags, another user's one-line pre-upload meanwhile, and a page
    of samples at the tag cap."""
    tags = [{"name": f"t{i}"} for i in range(100_000)]
    waited = {}

    def honest():
        time.sleep(0.3)
        _, _, took = svc.request("POST", "/api/v1/samples/preupload", other, {})
        waited["took"] = took

    t = threading.Thread(target=honest)
    t.start()
    status, body, took = svc.request("POST", "/api/v1/samples/preupload", key, {"tags": tags}, timeout=600)
    t.join()
    rows.append(("5 tags per sample", "pre-upload with 100,000 tags",
                 f"{status} in {took * 1000:.0f} ms; another user's pre-upload meanwhile {waited['took'] * 1000:.0f} ms"))
    for i in range(10):
        svc.request("POST", "/api/v1/samples/preupload", key, {"tags": [{"name": f"c{j}"} for j in range(200)]})
    status, body, took = svc.request("GET", "/api/v1/samples?per_page=10", key)
    _, hwm = svc.memory()
    rows.append(("5 tags per sample", "GET /samples?per_page=10, samples at the most tags a request may add",
                 f"{status}: {len(body) / 1e6:.3f} MB in {took * 1000:.0f} ms; service peak {hwm} MB"))


def rotation(svc, key, rows):
    """A download address made before the key was rotated."""
    status, body, _ = svc.request("POST", "/api/v1/documents/init_upload", key, {"filename": "r.txt", "size": 5})
    init = json.loads(body)
    # The signed form, by hand.
    boundary = "----mgds"
    parts = []
    for k, v in init["additional_fields"].items():
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n')
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="r.txt"\r\n\r\nhello\r\n'
                 f"--{boundary}--\r\n")
    form = "".join(parts).encode()
    url = urllib.parse.urlparse(init["upload_url"])
    conn = http.client.HTTPConnection(svc.host, svc.port)
    conn.request("POST", url.path, form, {"Content-Type": f"multipart/form-data; boundary={boundary}"})
    conn.getresponse().read()
    doc = init["document_id"]
    svc.request("POST", "/api/v1/documents/confirm_upload", key, {"document_id": doc})
    _, body, _ = svc.request("POST", f"/api/v1/documents/{doc}/download_uri", key, {})
    link = urllib.parse.urlparse(json.loads(body)["download_uri"])
    before, _, _ = svc.request("GET", link.path + "?" + link.query)
    email = "rotate@lab.example.org"
    subprocess.run([svc.mgds, "admin", "--data-dir", svc.data, "user", "rotate-key", email],
                   check=True, capture_output=True)
    after, _, _ = svc.request("GET", link.path + "?" + link.query)
    rows.append(("7 key rotation", "a download address made before the key was rotated",
                 f"answered {before} before the rotation, {after} after"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mgds", help="the mgds binary (default: build target/debug/mgds with cargo)")
    args = ap.parse_args()
    mgds = args.mgds
    if not mgds:
        subprocess.run(["cargo", "build", "--locked", "--bin", "mgds"], cwd=ROOT, check=True)
        mgds = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "debug", "mgds")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        svc = Service(mgds, os.path.join(tmp, "data"))
        try:
            key = svc.user("lab@lab.example.org")
            other = svc.user("other@lab.example.org")
            # The metric labels last: on a build that keeps every method as a label, rendering
            # /metrics takes the process's peak far above what the others take.
            huge_pair(svc, key, rows)
            many_tags(svc, key, other, rows)
            rotation(svc, svc.user("rotate@lab.example.org"), rows)
            odd_methods(svc, rows)
        finally:
            svc.stop()
    print(f"\nmgds: {mgds}\n")
    print("| finding | hostile request | what the service did |")
    print("|---|---|---|")
    for finding, what, result in rows:
        print(f"| {finding} | {what} | {result} |")


if __name__ == "__main__":
    sys.exit(main())
