#!/bin/bash
# First start: a cluster with the account and database of POSTGRES_USER, POSTGRES_PASSWORD and POSTGRES_DB;
# then the server in the foreground, listening on every address, as the postgres user.
set -euo pipefail
user="${POSTGRES_USER:-postgres}"
db="${POSTGRES_DB:-$user}"
mkdir -p "$PGDATA" /run/postgresql
chown -R postgres:postgres "$PGDATA" /run/postgresql
chmod 700 "$PGDATA"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile="$(mktemp)"
  printf '%s' "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required}" > "$pwfile"
  chown postgres "$pwfile"
  su postgres -c "initdb --username='$user' --pwfile='$pwfile' --auth-local=trust --auth-host=scram-sha-256 -D '$PGDATA'" >/dev/null
  rm -f "$pwfile"
  echo "host all all 0.0.0.0/0 scram-sha-256" >> "$PGDATA/pg_hba.conf"
  echo "host all all ::/0 scram-sha-256" >> "$PGDATA/pg_hba.conf"
  if [ "$db" != "postgres" ]; then
    su postgres -c "postgres -D '$PGDATA' -c listen_addresses='' &" 
    until su postgres -c "pg_isready -q -h /run/postgresql"; do sleep 0.2; done
    su postgres -c "psql -q -h /run/postgresql -U '$user' -d postgres -c 'CREATE DATABASE \"$db\"'"
    su postgres -c "pg_ctl -D '$PGDATA' -m fast -w stop" >/dev/null
  fi
fi
exec su postgres -c "exec postgres -D '$PGDATA' -c listen_addresses='*' -c unix_socket_directories=/run/postgresql"
