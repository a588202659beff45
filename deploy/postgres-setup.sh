#!/usr/bin/env bash
# Makes the PostgreSQL role and database MGDS uses, on the database machine (Debian: apt install
# postgresql). Run as root: ./postgres-setup.sh [PASSWORD]; prints the address for mgds.env.
# MGDS creates and updates its tables itself at start. Text compares byte by byte whatever the
# database's locale (the tables say so), so the default cluster is fine.
set -euo pipefail
password="${1:-$(openssl rand -hex 16)}"
runuser -u postgres -- psql -v ON_ERROR_STOP=1 -q <<SQL
DO \$\$ BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'mgds') THEN
        CREATE ROLE mgds LOGIN PASSWORD '$password';
    ELSE
        ALTER ROLE mgds PASSWORD '$password';
    END IF;
END \$\$;
SQL
if ! runuser -u postgres -- psql -tAc "SELECT 1 FROM pg_database WHERE datname = 'mgds'" | grep -q 1; then
    runuser -u postgres -- createdb --owner mgds --encoding UTF8 --template template0 mgds
fi
echo "MGDS_DATABASE_URL=postgres://mgds:$password@$(hostname -f)/mgds"
echo "(allow the API and worker machines in pg_hba.conf, e.g. 'host mgds mgds 10.0.0.0/8 scram-sha-256', and reload)" >&2
