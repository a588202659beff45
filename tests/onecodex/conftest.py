"""The real `onecodex` client (library and CLI, from PyPI) against a running MGDS service.

The Rust test in `crates/cli/tests/it/onecodex.rs` starts `mgds serve`, fills it with records of
every kind and state, and writes what it made to the JSON file named by `MGDS_WORLD`; these tests
then drive the service through `onecodex` and compare what the client shows with what the
service answers directly over HTTP.
"""

import json
import os
import pathlib

import pytest
import requests


@pytest.fixture(scope="session")
def world():
    """What the service holds: users, samples, analyses, documents, files to upload."""
    return json.loads(pathlib.Path(os.environ["MGDS_WORLD"]).read_text())


def make_api(world, user):
    from onecodex import Api

    return Api(
        api_key=world["users"][user]["key"],
        base_url=world["base_url"],
        load_extensions=False,
        telemetry=False,
    )


@pytest.fixture(scope="session")
def ocx(world):
    """The library, signed in as the lab's scientist."""
    return make_api(world, "lab")


class Raw:
    """The service's own answers, over plain HTTP, to compare the client's view with."""

    def __init__(self, world, user):
        self.base = world["base_url"]
        self.session = requests.Session()
        self.session.auth = (world["users"][user]["key"], "")

    def get(self, path, **params):
        r = self.session.get(self.base + path, params=params, timeout=60)
        assert r.status_code == 200, f"GET {path}: {r.status_code} {r.text}"
        return r.json()

    def post(self, path, body=None):
        r = self.session.post(self.base + path, json=body if body is not None else {}, timeout=60)
        assert r.status_code in (200, 201), f"POST {path}: {r.status_code} {r.text}"
        return r.json()

    def all(self, path, **params):
        """Every item of a list, one page of 1000 (the tests hold fewer)."""
        return self.get(path, per_page=1000, **params)


@pytest.fixture(scope="session")
def raw(world):
    return Raw(world, "lab")


@pytest.fixture(scope="session")
def raw_colleague(world):
    return Raw(world, "colleague")


def ident(obj_or_ref):
    """The id at the end of a `$uri`/`$ref`, or of a model's `id`."""
    if isinstance(obj_or_ref, dict):
        uri = obj_or_ref.get("$uri") or obj_or_ref.get("$ref")
        return uri.rsplit("/", 1)[-1]
    return obj_or_ref.id
