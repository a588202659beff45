#!/usr/bin/env bash
# Runs every test of the workspace. Needs only Rust (cargo) and a C compiler, as any Rust
# install on Debian has; the SQLite library is built from source by the build.
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -d ../shared/reference/fixtures ]; then
    echo "error: ../shared/reference/fixtures not found; the fixture tests need shared/ beside the repository" >&2
    exit 1
fi
if cargo nextest --version >/dev/null 2>&1; then
    cargo nextest run --workspace --locked --no-fail-fast
else
    cargo test --workspace --locked --no-fail-fast
fi
