# A real OpenID Connect provider for the tests (sourced by test.sh): panva's oidc-provider from
# npm, driven by tests/oidc/provider.mjs (its configuration is described there).
#
# install_test_oidc: installs the packages locked in tests/oidc/package-lock.json once into the
# cache folder ($MGDS_CACHE_DIR, else $XDG_CACHE_HOME/mgds, else ~/.cache/mgds) with npm ci,
# again only when the lock changes, puts provider.mjs beside them, and exports
# MGDS_TEST_OIDC_PROVIDER with its path. The tests start it themselves (node, on stdin).

install_test_oidc() {
    local src version cache root tmp
    src="$(cd "$(dirname "${BASH_SOURCE[0]}")/oidc" && pwd)"
    if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
        echo "error: the OpenID Connect tests need Node.js and npm" >&2
        return 1
    fi
    version=$(node -p 'require(process.argv[1]).dependencies["oidc-provider"]' "$src/package.json") || return 1
    cache="${MGDS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mgds}"
    root="$cache/oidc-provider-$version"
    if ! cmp -s "$src/package-lock.json" "$root/package-lock.json" || [ ! -d "$root/node_modules/oidc-provider" ]; then
        echo "installing oidc-provider $version into $root..." >&2
        mkdir -p "$cache"
        tmp=$(mktemp -d "$root.XXXXXX") || return 1
        cp "$src/package.json" "$src/package-lock.json" "$tmp/"
        if ! (cd "$tmp" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2); then
            rm -rf "$tmp"
            return 1
        fi
        # Only a complete install takes the folder's name.
        rm -rf "$root"
        mv "$tmp" "$root"
    fi
    # Beside its node_modules, where Node.js resolves its imports.
    cp "$src/provider.mjs" "$root/provider.mjs"
    export MGDS_TEST_OIDC_PROVIDER="$root/provider.mjs"
}
