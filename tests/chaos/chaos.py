#!/usr/bin/env python3
"""Chaos run: `mgds serve --workers 0` and an `mgds worker` beside it, each killed (SIGKILL) at
random moments while samples upload and analyses run, then restarted. At the end every sample the
client saw confirmed exists once with its whole file, no other sample exists, every sample has
exactly one classification, and every classification has finished.

    python3 tests/chaos/chaos.py [--rounds 100] [--mgds PATH]

Builds `mgds` (release) with cargo unless --mgds names one. Needs only Python 3 (standard
library). Prints a table; exits 1 if any target is missed.
"""

import argparse
import gzip
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def request(method, url, key=None, body=None, headers=None, timeout=30):
    data = json.dumps(body).encode() if isinstance(body, (dict, list)) else body
    req = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    if key:
        req.add_header("X-API-Key", key)
    if isinstance(body, (dict, list)):
        req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req, timeout=timeout) as r:
        text = r.read()
        try:
            return r.status, (json.loads(text) if text else None)
        except ValueError:
            return r.status, text  # the storage endpoint answers S3's XML


def multipart(fields, data, name):
    boundary = uuid.uuid4().hex
    out = bytearray()
    for k, v in fields.items():
        out += f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode()
    out += f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n\r\n'.encode()
    out += data + f"\r\n--{boundary}--\r\n".encode()
    return bytes(out), f"multipart/form-data; boundary={boundary}"


class Cluster:
    """The service and one worker over one data folder, restartable."""

    def __init__(self, mgds, data, lease):
        self.mgds, self.data, self.lease = mgds, data, lease
        self.port = None
        self.serve = self.worker = None

    def start_serve(self):
        listen = f"127.0.0.1:{self.port}" if self.port else "127.0.0.1:0"
        p = subprocess.Popen(
            [self.mgds, "serve", "--listen", listen, "--workers", "0", "--no-demo", "--data-dir", self.data],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env={**os.environ, "NO_COLOR": "1"})
        line = p.stdout.readline().decode()
        if not line.startswith("listening on "):
            # The port may still be held for a moment after a kill.
            p.kill()
            p.wait()
            time.sleep(0.2)
            return self.start_serve()
        self.url = line.split()[-1]
        self.port = self.url.rsplit(":", 1)[1]
        self.serve = p

    def start_worker(self):
        self.worker = subprocess.Popen(
            [self.mgds, "worker", "--data-dir", self.data, "--job-lease", str(self.lease), "--threads", "1"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def engines(self):
        """Engine processes started by the worker that run now."""
        found = 0
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if b"__mgds-engine" in f.read():
                        found += 1
            except OSError:
                pass
        return found

    def stop(self):
        for p in (self.serve, self.worker):
            if p and p.poll() is None:
                p.kill()
                p.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--mgds", help="the mgds binary (default: built here with cargo, release)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--keep", action="store_true", help="keep the data folder (its path is printed)")
    args = ap.parse_args()
    if args.mgds is None:
        subprocess.run(["cargo", "build", "--release", "--locked", "--bin", "mgds"], cwd=ROOT, check=True)
        target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
        args.mgds = os.path.join(target, "release", "mgds")
    if not os.access(args.mgds, os.X_OK):
        sys.exit(f"{args.mgds} is not an executable mgds")
    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix="mgds-chaos-")
    data = os.path.join(work, "data")
    subprocess.run([args.mgds, "db", "install", "--demo", "--data-dir", data], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    key = subprocess.run([args.mgds, "admin", "--data-dir", data, "user", "create", "chaos@lab.test"],
                         check=True, capture_output=True, text=True).stdout.strip()
    with open(os.path.join(ROOT, "assets", "demo", "reads.fastq.gz"), "rb") as f:
        demo = f.read()
    # Large enough that kills land in the middle of uploads and of classifications.
    reads = demo * 50

    c = Cluster(args.mgds, data, lease=3)
    c.start_serve()
    c.start_worker()
    confirmed = {}  # file name -> sample id
    stats = {"service kills": 0, "worker kills": 0, "uploads interrupted": 0,
             "kills during an analysis": 0, "confirm retried": 0}
    started = time.time()

    def upload(name):
        """Uploads until confirmed; answers the sample id."""
        while True:
            try:
                _, init = request("POST", f"{c.url}/api/v1/samples/init_upload", key,
                                  {"filename": name, "size": len(reads)})
                body, ctype = multipart(init["additional_fields"], reads, name)
                request("POST", init["upload_url"], body=body, headers={"Content-Type": ctype}, timeout=60)
            except (urllib.error.URLError, ConnectionError, OSError):
                stats["uploads interrupted"] += 1
                time.sleep(0.3)
                continue
            # Confirming again answers the same sample: retry it as it is.
            while True:
                try:
                    _, s = request("POST", f"{c.url}/api/v1/samples/confirm_upload", key,
                                   {"sample_id": init["sample_id"]})
                    return s["sample"]["$ref"].rsplit("/", 1)[1]
                except urllib.error.HTTPError as e:
                    sys.exit(f"confirm of {name} refused: {e.code} {e.read()[:300]!r}")
                except (urllib.error.URLError, ConnectionError, OSError):
                    stats["confirm retried"] += 1
                    time.sleep(0.3)

    for round_ in range(args.rounds):
        name = f"chaos_{round_:03}.fastq.gz"
        result = {}
        t = threading.Thread(target=lambda: result.update(id=upload(name)))
        t.start()
        time.sleep(rng.uniform(0.0, 1.0))
        if c.engines():
            stats["kills during an analysis"] += 1
        victim = rng.choice(["serve", "worker"])
        proc = c.serve if victim == "serve" else c.worker
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        stats[f"{'service' if victim == 'serve' else 'worker'} kills"] += 1
        time.sleep(rng.uniform(0.0, 0.3))
        if victim == "serve":
            c.start_serve()
        else:
            c.start_worker()
        t.join(timeout=300)
        if "id" not in result:
            sys.exit(f"the upload of {name} never finished")
        confirmed[name] = result["id"]

    # Every analysis finishes after the last restart.
    deadline = time.time() + 600
    while True:
        _, samples = request("GET", f"{c.url}/api/v1/samples?per_page=1000", key)
        _, analyses = request("GET", f"{c.url}/api/v1/classifications?per_page=1000", key)
        if len(analyses) >= len(samples) and all(a["complete"] for a in analyses):
            break
        if time.time() > deadline:
            break
        time.sleep(1)
    c.stop()

    by_name = {}
    for s in samples:
        by_name.setdefault(s["filename"], []).append(s)
    partial = [s for s in samples if s["size"] != len(reads)]
    unexpected = [n for n in by_name if n not in confirmed]
    duplicated_samples = [n for n, ss in by_name.items() if len(ss) > 1]
    per_sample = {}
    for a in analyses:
        per_sample.setdefault(a["sample"]["$ref"].rsplit("/", 1)[1], []).append(a)
    lost = [sid for sid in confirmed.values() if sid not in per_sample]
    duplicated = [sid for sid, aa in per_sample.items() if len(aa) > 1]
    unfinished = [a for a in analyses if not a["complete"]]
    failed = [a for a in analyses if a["complete"] and not a["success"]]

    rows = [
        ("rounds (a kill each)", args.rounds, "-"),
        ("service kills", stats["service kills"], "-"),
        ("worker kills", stats["worker kills"], "-"),
        ("kills while an engine process ran", stats["kills during an analysis"], "-"),
        ("uploads interrupted and started again", stats["uploads interrupted"], "-"),
        ("confirmations retried", stats["confirm retried"], "-"),
        ("samples confirmed to the client", len(confirmed), f"{args.rounds}"),
        ("samples on the service", len(samples), f"{args.rounds}"),
        ("partial samples (size differs)", len(partial), "0"),
        ("samples the client never saw confirmed", len(unexpected), "0"),
        ("files with more than one sample", len(duplicated_samples), "0"),
        ("samples without a classification (lost)", len(lost), "0"),
        ("samples with more than one classification", len(duplicated), "0"),
        ("classifications not finished", len(unfinished), "0"),
        ("classifications failed", len(failed), "0"),
        ("wall time", f"{time.time() - started:.0f} s", "-"),
    ]
    print()
    print("| measure | value | target |")
    print("|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} |")
    bad = partial or unexpected or duplicated_samples or lost or duplicated or unfinished or failed
    if args.keep:
        print(f"data folder kept: {data}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    for a in failed[:3]:
        print("failed:", a.get("error_msg"))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
