#!/usr/bin/env bash
# The service past one machine, measured: starts a throwaway PostgreSQL and Garage as the tests
# do (tests/postgres.sh, tests/garage.sh; Debian's postgresql and Garage built once into the
# cache folder), runs `cargo bench -p mgds-cli --bench scale`, and stops them. The sizes are the
# bench's variables (see crates/cli/benches/scale.rs).
set -euo pipefail
cd "$(dirname "$0")/.."
source run.sh
install_debian_packages postgresql
source tests/postgres.sh
source tests/garage.sh
trap 'stop_test_postgres; stop_test_garage' EXIT
start_test_postgres
start_test_garage
cargo bench --locked -p mgds-cli --bench scale
