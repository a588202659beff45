"""The `onecodex` command line against MGDS, as a lab runs it: `ONE_CODEX_API_BASE`,
`ONE_CODEX_API_KEY` and `AWS_ENDPOINT_URL_S3` set, nothing else changed."""

import gzip
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from conftest import ident


def onecodex(world, *args, cwd=None, user="lab", check=True):
    """Runs the real CLI; answers (stdout, stderr)."""
    home = pathlib.Path(world["scratch"]) / f"home-{user}"
    home.mkdir(exist_ok=True)
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "ONE_CODEX_API_BASE": world["base_url"],
        "ONE_CODEX_API_KEY": world["users"][user]["key"],
        "ONE_CODEX_NO_TELEMETRY": "1",
        "AWS_ENDPOINT_URL_S3": world["s3_endpoint"],
    }
    exe = pathlib.Path(sys.executable).parent / "onecodex"
    p = subprocess.run(
        [str(exe), *args], cwd=cwd or world["scratch"], env=env, capture_output=True, text=True, timeout=600
    )
    if check:
        assert p.returncode == 0, f"onecodex {' '.join(args)} exited {p.returncode}\n{p.stdout}\n{p.stderr}"
    return p.stdout, p.stderr


def test_the_key_is_accepted_on_the_command_line(world):
    # The CLI checks the key's length (32) before sending anything.
    out, _ = onecodex(world, "--api-key", world["users"]["lab"]["key"], "samples", world["samples"]["classified"])
    assert world["samples"]["classified"] in out


def test_samples_lists_every_sample(world, raw):
    out, _ = onecodex(world, "samples")
    listed = json.loads(out)
    assert sorted(ident(s) for s in listed) == sorted(ident(s) for s in raw.all("/api/v1/samples"))


def test_upload_single_with_metadata_tag_and_project(world, raw):
    path = world["files"]["cli_single"]
    _, err = onecodex(
        world,
        "upload",
        path,
        "--tag",
        "cli-upload",
        "--metadata",
        "platform=Illumina MiSeq",
        "--metadata",
        "plate=P3",
        "--project",
        world["project"]["id"],
    )
    assert "upload finished as sample" in err, err
    sid = err.split("upload finished as sample")[-1].split()[0].strip(" .'\"")
    mine = raw.get(f"/api/v1/samples/{sid}")
    assert mine["filename"] == pathlib.Path(path).name and ident(mine["project"]) == world["project"]["id"]
    meta = raw.get(f"/api/v1/metadata/{ident(mine['metadata'])}")
    assert meta["platform"] == "Illumina MiSeq" and meta["custom"]["plate"] in (3, 3.0, "P3")


def test_upload_a_pair_as_one_sample(world, raw):
    r1, r2 = world["files"]["cli_pair"]
    before = len(raw.all("/api/v1/samples"))
    _, err = onecodex(world, "upload", r1, r2, "--no-prompt")
    assert "upload finished as sample" in err, err
    assert len(raw.all("/api/v1/samples")) == before + 1


def test_classification_results_and_read_level(world, raw):
    cid = world["analyses"]["classification"]
    out, _ = onecodex(world, "classifications", cid, "--results")
    # Printed with Python's pretty printer; the numbers are the service's.
    mine = raw.get(f"/api/v1/classifications/{cid}/results")
    assert str(mine["n_reads"]) in out
    for row in mine["table"][:5]:
        assert row["tax_id"] in out
    where = pathlib.Path(world["scratch"]) / "readlevel"
    where.mkdir(exist_ok=True)
    onecodex(world, "classifications", cid, "--read-level", "--read-level-path", str(where))
    files = list(where.iterdir())
    assert len(files) == 1, files
    rows = gzip.decompress(files[0].read_bytes()).decode().splitlines()
    assert len(rows) - 1 == mine["n_reads"]


def test_analyses_files_and_download(world, raw):
    out, _ = onecodex(world, "analyses")
    assert sorted(ident(a) for a in json.loads(out)) == sorted(ident(a) for a in raw.all("/api/v1/analyses"))
    aid = world["analyses"]["alignment"]
    out, _ = onecodex(world, "analyses", "files", aid, "--json")
    files = json.loads(out)
    assert files and all(f["size"] > 0 for f in files)
    dest = pathlib.Path(world["scratch"]) / "analysis-files"
    onecodex(world, "analyses", "download", aid, "-o", str(dest))
    got = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file())
    assert got and all(p.stat().st_size > 0 for p in dest.rglob("*") if p.is_file())


def test_panels(world, raw):
    out, _ = onecodex(world, "panels")
    assert sorted(ident(a) for a in json.loads(out)) == sorted(ident(a) for a in raw.all("/api/v1/panels"))


def test_documents_list_upload_download(world, raw):
    out, _ = onecodex(world, "documents", "list", "--json")
    assert world["document"]["id"] in [ident(d) for d in json.loads(out)]
    report = world["files"]["cli_report"]
    _, err = onecodex(world, "documents", "upload", report)
    assert "finished as document" in err, err
    did = err.split("finished as document")[-1].split()[0].strip(" .'\"")
    dest = pathlib.Path(world["scratch"]) / "doc-download"
    dest.mkdir(exist_ok=True)
    onecodex(world, "documents", "download", did, "-O", str(dest / "back.pdf"))
    assert (dest / "back.pdf").read_bytes() == pathlib.Path(report).read_bytes()
    # The colleague sees what was shared with them.
    out, _ = onecodex(world, "documents", "list", "--json", user="colleague")
    assert world["document"]["id"] in [ident(d) for d in json.loads(out)]


def test_download_samples(world, raw):
    dest = pathlib.Path(world["scratch"]) / "sample-downloads"
    onecodex(world, "download", "samples", str(dest), "-s", world["samples"]["classified"], "--no-prompt")
    files = list(dest.iterdir())
    assert len(files) == 1
    assert files[0].read_bytes() == pathlib.Path(world["files"]["reads"]).read_bytes()
