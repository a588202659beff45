# A throwaway Garage (a self-hosted S3-compatible store) for the tests (sourced by test.sh and
# the benchmarks).
#
# garage_binary: prints the path of Garage's binary, building it once with cargo (from
# crates.io) into the cache folder ($MGDS_CACHE_DIR, else $XDG_CACHE_HOME/mgds, else
# ~/.cache/mgds) when missing.
# start_test_garage: runs a single-node Garage (replication factor 1, SQLite metadata) in a new
# temporary folder on free loopback ports, creates a bucket and a key that may use it, and
# exports MGDS_TEST_S3_ENDPOINT, MGDS_TEST_S3_REGION, MGDS_TEST_S3_BUCKET,
# MGDS_TEST_S3_ACCESS_KEY_ID and MGDS_TEST_S3_SECRET_ACCESS_KEY, and MGDS_TEST_GARAGE_ADMIN_URL
# with MGDS_TEST_GARAGE_ADMIN_TOKEN: an admin token limited to the calls that give uploads
# buckets of their own (the scope deploy/README.md gives). stop_test_garage stops it and removes
# the folder.

GARAGE_VERSION=2.5.0

garage_binary() {
    local cache="${MGDS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mgds}"
    local root="$cache/garage-$GARAGE_VERSION"
    if [ ! -x "$root/bin/garage" ]; then
        echo "building Garage $GARAGE_VERSION into $root (once; a few minutes)..." >&2
        # What a single test node needs only (no metrics, LMDB or K2V): a shorter build.
        cargo install --locked --quiet garage --version "$GARAGE_VERSION" --no-default-features \
            --features bundled-libs,sqlite --root "$root" >&2 || return 1
    fi
    echo "$root/bin/garage"
}

# Free TCP ports on loopback, one per argument's worth.
free_ports() {
    python3 - "$1" <<'PY'
import socket, sys
held = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    held.append(s)
print(" ".join(str(s.getsockname()[1]) for s in held))
PY
}

start_test_garage() {
    local garage ports rpc s3 admin node i key
    garage=$(garage_binary) || return 1
    TEST_GARAGE_DIR=$(mktemp -d -t mgds-garage.XXXXXX)
    read -r rpc s3 admin < <(free_ports 3)
    cat >"$TEST_GARAGE_DIR/garage.toml" <<TOML
metadata_dir = "$TEST_GARAGE_DIR/meta"
data_dir = "$TEST_GARAGE_DIR/data"
db_engine = "sqlite"
replication_factor = 1
rpc_bind_addr = "127.0.0.1:$rpc"
rpc_public_addr = "127.0.0.1:$rpc"
rpc_secret = "$(python3 -c 'import secrets; print(secrets.token_hex(32))')"

[s3_api]
s3_region = "garage"
api_bind_addr = "127.0.0.1:$s3"
root_domain = ".s3.garage.localhost"

[admin]
api_bind_addr = "127.0.0.1:$admin"
admin_token = "$(python3 -c 'import secrets; print(secrets.token_hex(32))')"
TOML
    TEST_GARAGE=("$garage" -c "$TEST_GARAGE_DIR/garage.toml")
    "${TEST_GARAGE[@]}" server >"$TEST_GARAGE_DIR/server.log" 2>&1 &
    TEST_GARAGE_PID=$!
    # The node answers its own RPC once it has started (its id alone is known before).
    for i in $(seq 1 200); do
        "${TEST_GARAGE[@]}" status >/dev/null 2>&1 \
            && node=$("${TEST_GARAGE[@]}" node id -q 2>/dev/null | cut -d@ -f1) && [ -n "$node" ] && break
        node=""
        sleep 0.1
    done
    if [ -z "${node:-}" ]; then
        echo "error: Garage did not start; its log:" >&2
        cat "$TEST_GARAGE_DIR/server.log" >&2
        return 1
    fi
    "${TEST_GARAGE[@]}" layout assign -z dc1 -c 1G "$node" >/dev/null
    "${TEST_GARAGE[@]}" layout apply --version 1 >/dev/null
    "${TEST_GARAGE[@]}" bucket create mgds-test >/dev/null
    key=$("${TEST_GARAGE[@]}" key create mgds-test-key)
    "${TEST_GARAGE[@]}" bucket allow --read --write --owner mgds-test --key mgds-test-key >/dev/null
    export MGDS_TEST_S3_ENDPOINT="http://127.0.0.1:$s3"
    export MGDS_TEST_S3_REGION=garage
    export MGDS_TEST_S3_BUCKET=mgds-test
    MGDS_TEST_S3_ACCESS_KEY_ID=$(printf '%s\n' "$key" | awk '/Key ID:/ { print $NF }')
    MGDS_TEST_S3_SECRET_ACCESS_KEY=$(printf '%s\n' "$key" | awk '/Secret key:/ { print $NF }')
    export MGDS_TEST_S3_ACCESS_KEY_ID MGDS_TEST_S3_SECRET_ACCESS_KEY
    export MGDS_TEST_GARAGE_ADMIN_URL="http://127.0.0.1:$admin"
    MGDS_TEST_GARAGE_ADMIN_TOKEN=$("${TEST_GARAGE[@]}" admin-token create -q --scope \
        GetBucketInfo,CreateBucket,UpdateBucket,DeleteBucket,CleanupIncompleteUploads,CreateKey,DeleteKey,AllowBucketKey \
        mgds-upload-buckets)
    export MGDS_TEST_GARAGE_ADMIN_TOKEN
}

stop_test_garage() {
    [ -n "${TEST_GARAGE_DIR:-}" ] || return 0
    kill "$TEST_GARAGE_PID" 2>/dev/null && wait "$TEST_GARAGE_PID" 2>/dev/null
    rm -rf "$TEST_GARAGE_DIR"
    unset TEST_GARAGE_DIR MGDS_TEST_S3_ENDPOINT MGDS_TEST_S3_REGION MGDS_TEST_S3_BUCKET \
        MGDS_TEST_S3_ACCESS_KEY_ID MGDS_TEST_S3_SECRET_ACCESS_KEY MGDS_TEST_GARAGE_ADMIN_URL \
        MGDS_TEST_GARAGE_ADMIN_TOKEN
}
