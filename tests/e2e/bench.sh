#!/usr/bin/env bash
# MGDS Desktop with 10,000 samples against 100: builds the UI and the app in release, then runs
# `cargo bench -p mgds-e2e --bench desktop` in a virtual display with a throwaway keyring, and
# prints the table. Needs the Debian packages ./test.sh installs (run it once on a new machine).
# MGDS_BENCH_SAMPLES=N measures N samples instead of 10,000. MGDS_BENCH=compare runs the
# comparison view's benchmark instead (500 classified samples, 50 taxa).
# MGDS_BENCH=browser runs the web UI's benchmark instead: `mgds serve` (release) with 10,000
# samples in headless Chromium (Debian's chromium and chromium-driver, which ./test.sh installs),
# and a 2 GiB FASTQ.gz uploaded from the browser against `mgds upload` (MGDS_BENCH_UPLOAD_MB=N
# for another size; the file is made once in target/bench-files).
set -euo pipefail
cd "$(dirname "$0")/../.."
(cd ui && npm ci --no-audit --no-fund --loglevel=error && npm run build --silent)
target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
if [ "${MGDS_BENCH:-}" = browser ]; then
    cargo build --release --locked --quiet -p mgds-cli
    export MGDS_BIN="$target_dir/release/mgds" CHROMEDRIVER="${CHROMEDRIVER:-/usr/bin/chromedriver}"
    exec cargo bench --locked -p mgds-e2e --bench browser
fi
if [ ! -x "$target_dir/tools/bin/tauri-driver" ]; then
    cargo install tauri-driver --locked --quiet --root "$target_dir/tools"
fi
cargo build --release --locked --quiet -p mgds-desktop
export MGDS_DESKTOP_BIN="$target_dir/release/mgds-desktop" TAURI_DRIVER="$target_dir/tools/bin/tauri-driver"
export MGDS_E2E_SCREENSHOTS="$target_dir/e2e-screenshots"
export XDG_DATA_HOME; XDG_DATA_HOME="$(mktemp -d)"
exec dbus-run-session -- bash -c '
    printf "mgds-bench" | gnome-keyring-daemon --unlock --components=secrets >/dev/null
    xvfb-run -a -s "-screen 0 1440x900x24" cargo bench --locked -p mgds-e2e --bench "${MGDS_BENCH:-desktop}"'
