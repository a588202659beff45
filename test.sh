#!/usr/bin/env bash
# Runs every test of the workspace on a Debian machine with Rust (cargo and a C compiler).
# The keychain tests need a real Secret Service: this installs gnome-keyring (Debian package) when
# it is missing and runs the tests inside a private D-Bus session with an unlocked keyring.
# The desktop app needs WebKitGTK and its end-to-end tests Xvfb and WebKitWebDriver: the Debian
# packages are installed when missing, Node.js too (for the UI in ui/), and tauri-driver is built
# into the target folder. Order: UI unit tests and build, Rust tests, the service's tests again on
# a throwaway PostgreSQL server (Debian's postgresql, installed when missing; tests/postgres.sh)
# with its files in a throwaway Garage (tests/garage.sh; built once with cargo into
# ~/.cache/mgds), then the end-to-end tests of the real app window and of the web UI in headless
# Chromium (screenshots in target/e2e-screenshots/).
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -d ../shared/reference/fixtures ]; then
    echo "error: ../shared/reference/fixtures not found; the fixture tests need shared/ beside the repository" >&2
    exit 1
fi
# The app's Debian packages (from run.sh), the keychain's, Xvfb, xdotool (answers the app's native
# save dialog as a person would) and the WebDriver; Chromium and its WebDriver (the web UI's
# tests); Kraken 2 and
# ART, which the classifier's tests run beside ours on real genomes; faketime, which runs a worker
# on a clock that is off; poppler-utils, whose pdftotext and pdftoppm read the reports' PDFs back.
source ./run.sh
install_debian_packages "${APP_PACKAGES[@]}" gnome-keyring dbus xvfb xauth xdotool webkit2gtk-driver fonts-dejavu-core \
    chromium chromium-driver kraken2 art-nextgen-simulation-tools postgresql faketime poppler-utils
# A real OpenID Connect provider for the single sign-on tests (npm's oidc-provider, installed
# once into the cache folder; tests/oidc.sh).
source tests/oidc.sh
install_test_oidc
# The UI: its unit tests, then the build the desktop app embeds (ui/dist).
(cd ui && npm ci --no-audit --no-fund --loglevel=error && npm test --silent && npm run build --silent)
target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
# The end-to-end tests drive the real app through tauri-driver (from crates.io) and WebKitWebDriver.
if [ ! -x "$target_dir/tools/bin/tauri-driver" ]; then
    cargo install tauri-driver --locked --quiet --root "$target_dir/tools"
fi
# One build of the whole workspace, its binaries and every test target together: every crate is
# compiled once, with one set of features, and the test runs below reuse it (no second copy of a
# dependency). Incremental compilation only pays off on rebuilds, so it is off unless asked for;
# with it, a clean build's target folder is about twice the size.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
mkdir -p "$target_dir"
free_kb=$(df -Pk "$target_dir" | awk 'NR == 2 { print $4 }')
if [ "${free_kb:-0}" -lt 3500000 ] && [ ! -d "$target_dir/debug/deps" ]; then
    echo "warning: $((free_kb / 1024)) MB free at $target_dir; a first build needs about 3 GB (set CARGO_TARGET_DIR to build elsewhere)" >&2
fi
cargo build --workspace --bins --tests --locked --quiet
if cargo nextest --version >/dev/null 2>&1; then
    run_tests="cargo nextest run --workspace --locked --no-fail-fast -E 'not package(mgds-e2e)'"
    run_postgres="cargo nextest run --workspace --locked --no-fail-fast -E 'package(mgds-server) | (package(mgds-cli) & test(/^scale::/))'"
    run_e2e="cargo nextest run --workspace --locked --no-capture -E 'package(mgds-e2e)'"
else
    run_tests='cargo test --workspace --locked --no-fail-fast -- --skip desktop_app_end_to_end --skip a_browser_signs_in_and_keeps_its_account'
    run_postgres='cargo test --locked --no-fail-fast -p mgds-server && cargo test --locked -p mgds-cli --test it scale::'
    run_e2e='cargo test --workspace --locked --test desktop --test browser -- --nocapture'
fi
# The app in a virtual display, bounded in time: without a display the app cannot start while
# the WebDriver session would wait for it.
export MGDS_DESKTOP_BIN="$target_dir/debug/mgds-desktop" TAURI_DRIVER="$target_dir/tools/bin/tauri-driver"
export MGDS_BIN="$target_dir/debug/mgds" CHROMEDRIVER=/usr/bin/chromedriver
export MGDS_E2E_SCREENSHOTS="$target_dir/e2e-screenshots"
run_e2e="timeout --signal=TERM --kill-after=30 900 xvfb-run -a -s '-screen 0 1440x900x24' $run_e2e"
# The service's suite runs a second time on PostgreSQL with its files in an S3-compatible store:
# a throwaway PostgreSQL and a throwaway Garage (built once into the cache folder), each in a
# temporary folder, stopped at the end.
source tests/postgres.sh
source tests/garage.sh
trap 'stop_test_postgres; stop_test_garage' EXIT
start_test_postgres
start_test_garage
scale_env="MGDS_TEST_POSTGRES='$MGDS_TEST_POSTGRES' MGDS_TEST_S3_ENDPOINT='$MGDS_TEST_S3_ENDPOINT' \
MGDS_TEST_S3_REGION='$MGDS_TEST_S3_REGION' MGDS_TEST_S3_BUCKET='$MGDS_TEST_S3_BUCKET' \
MGDS_TEST_S3_ACCESS_KEY_ID='$MGDS_TEST_S3_ACCESS_KEY_ID' MGDS_TEST_S3_SECRET_ACCESS_KEY='$MGDS_TEST_S3_SECRET_ACCESS_KEY' \
MGDS_TEST_GARAGE_ADMIN_URL='$MGDS_TEST_GARAGE_ADMIN_URL' MGDS_TEST_GARAGE_ADMIN_TOKEN='$MGDS_TEST_GARAGE_ADMIN_TOKEN'"
unset MGDS_TEST_POSTGRES MGDS_TEST_S3_ENDPOINT MGDS_TEST_S3_REGION MGDS_TEST_S3_BUCKET MGDS_TEST_S3_ACCESS_KEY_ID \
    MGDS_TEST_S3_SECRET_ACCESS_KEY MGDS_TEST_GARAGE_ADMIN_URL MGDS_TEST_GARAGE_ADMIN_TOKEN
# A throwaway keyring for this run only, unlocked with a throwaway password.
export XDG_DATA_HOME; XDG_DATA_HOME="$(mktemp -d)"
status=0
dbus-run-session -- bash -c '
    printf "mgds-test" | gnome-keyring-daemon --unlock --components=secrets >/dev/null
    status=0
    MGDS_TEST_KEYCHAIN=1 '"$run_tests"' || status=$?
    echo "the service on PostgreSQL and an S3 store (Garage):" >&2
    '"$scale_env $run_postgres"' || status=$?
    '"$run_e2e"' || status=$?
    exit $status' || status=$?
exit $status
