#!/usr/bin/env bash
# Runs MGDS Desktop on a Debian machine with Rust (cargo and a C compiler): installs the Debian
# packages the window needs (WebKitGTK) and Node.js when missing, builds the UI, then the app.
# Extra arguments go to the app. MGDS_DATA_DIR points the local service at another data folder.
set -euo pipefail

# The Debian packages the app needs to build and run (test.sh adds its own to these).
APP_PACKAGES=(build-essential pkg-config libssl-dev libwebkit2gtk-4.1-dev libgtk-3-dev libayatana-appindicator3-dev librsvg2-dev)

# Installs those of the given Debian packages that are missing, and Node.js when there is no
# node/npm (as root, or through sudo).
install_debian_packages() {
    local packages=("$@") missing=() p
    command -v node >/dev/null && command -v npm >/dev/null || packages+=(nodejs npm)
    for p in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        local sudo=""
        [ "$(id -u)" -eq 0 ] || sudo="sudo"
        echo "installing Debian packages: ${missing[*]}" >&2
        $sudo apt-get update -qq
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
}

# test.sh reads the two definitions above and stops here.
[ "${BASH_SOURCE[0]}" = "$0" ] || return 0

cd "$(dirname "$0")"
install_debian_packages "${APP_PACKAGES[@]}"
if [ ! -d ui/node_modules ] || [ ui/package-lock.json -nt ui/node_modules/.package-lock.json ]; then
    (cd ui && npm ci --no-audit --no-fund --loglevel=error)
fi
(cd ui && npm run build --silent)
cargo build --release --locked -p mgds-desktop
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
    cat >&2 <<'MSG'
error: there is no display to open the MGDS window on (neither DISPLAY nor WAYLAND_DISPLAY is set).
hint: run ./run.sh from a desktop session (or over `ssh -X`); on a headless machine try it in a
      virtual display with `xvfb-run -a ./run.sh` (install the Debian package xvfb), or run the
      service alone for the command line and other computers with
      `cargo run --release --locked --bin mgds -- serve`.
MSG
    exit 1
fi
exec cargo run --release --locked -p mgds-desktop -- "$@"
