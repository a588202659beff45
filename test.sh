#!/usr/bin/env bash
# Runs every test of the workspace on a Debian machine with Rust (cargo and a C compiler).
# The keychain tests need a real Secret Service: this installs gnome-keyring (Debian package) when
# it is missing and runs the tests inside a private D-Bus session with an unlocked keyring.
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -d ../shared/reference/fixtures ]; then
    echo "error: ../shared/reference/fixtures not found; the fixture tests need shared/ beside the repository" >&2
    exit 1
fi
if ! command -v gnome-keyring-daemon >/dev/null || ! command -v dbus-run-session >/dev/null; then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -q
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends gnome-keyring dbus
fi
if cargo nextest --version >/dev/null 2>&1; then
    run_tests='cargo nextest run --workspace --locked --no-fail-fast'
else
    run_tests='cargo test --workspace --locked --no-fail-fast'
fi
# A throwaway keyring for this run only, unlocked with a throwaway password.
export XDG_DATA_HOME; XDG_DATA_HOME="$(mktemp -d)"
exec dbus-run-session -- bash -c '
    printf "mgds-test" | gnome-keyring-daemon --unlock --components=secrets >/dev/null
    MGDS_TEST_KEYCHAIN=1 '"$run_tests"
