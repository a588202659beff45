# A throwaway PostgreSQL server for the tests (sourced by test.sh and the benchmarks).
#
# start_test_postgres: creates a cluster in a new temporary folder with Debian's PostgreSQL
# (installed by the caller), as an unprivileged user (the `postgres` system user when run as
# root, else the caller), reachable only through a Unix socket in that folder, and exports
# MGDS_TEST_POSTGRES with its address. stop_test_postgres stops it and removes the folder.

start_test_postgres() {
    local bin
    bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
        echo "error: PostgreSQL's initdb was not found under /usr/lib/postgresql; install the Debian package postgresql" >&2
        return 1
    fi
    TEST_POSTGRES_DIR=$(mktemp -d -t mgds-postgres.XXXXXX)
    local as=()
    if [ "$(id -u)" -eq 0 ]; then
        chown postgres: "$TEST_POSTGRES_DIR"
        as=(runuser -u postgres --)
    fi
    # No locale: text sorts byte by byte, as the service expects (its columns say so too).
    "${as[@]}" "$bin/initdb" -D "$TEST_POSTGRES_DIR/data" -U mgds -A trust --no-locale -E UTF8 >"$TEST_POSTGRES_DIR/initdb.log" 2>&1 \
        || { cat "$TEST_POSTGRES_DIR/initdb.log" >&2; return 1; }
    "${as[@]}" "$bin/pg_ctl" -D "$TEST_POSTGRES_DIR/data" -l "$TEST_POSTGRES_DIR/server.log" -w \
        -o "-k $TEST_POSTGRES_DIR -c listen_addresses= -c max_connections=300 -c fsync=off" start >/dev/null \
        || { cat "$TEST_POSTGRES_DIR/server.log" >&2; return 1; }
    TEST_POSTGRES_BIN=$bin
    TEST_POSTGRES_AS=("${as[@]}")
    export MGDS_TEST_POSTGRES="postgres://mgds@localhost/postgres?host=$TEST_POSTGRES_DIR"
}

stop_test_postgres() {
    [ -n "${TEST_POSTGRES_DIR:-}" ] || return 0
    "${TEST_POSTGRES_AS[@]}" "$TEST_POSTGRES_BIN/pg_ctl" -D "$TEST_POSTGRES_DIR/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$TEST_POSTGRES_DIR"
    unset TEST_POSTGRES_DIR MGDS_TEST_POSTGRES
}
