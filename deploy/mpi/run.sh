#!/usr/bin/env bash
# A sharded pgrush benchmark under an MPI launcher: one shard per rank (Open MPI sets
# OMPI_COMM_WORLD_RANK and OMPI_COMM_WORLD_SIZE; MPICH's Hydra sets PMI_RANK and PMI_SIZE; pgrush
# reads either), then the shards merged into the report of the whole run.
#
#   deploy/mpi/run.sh RANKS [pgrush options...]
#   e.g. MPIRUN_ARGS="--hostfile hosts --map-by node" PGHOST=db.example deploy/mpi/run.sh 8 -c 16 -j 4 -T 300
#   or, with MPICH: MPIRUN=mpiexec.hydra MPIRUN_ARGS="-f hosts" deploy/mpi/run.sh 8 ...
#
# pgrush does not call MPI: it only reads the rank and the size, so any mpirun works.
# The options are per shard (-c and -j per rank; -R is the total rate). Every PG* variable set
# here reaches the ranks (with Open MPI through -x, for ranks on other hosts).
# Environment:
#   MPIRUN      the launcher (default: mpirun; Open MPI's or MPICH's mpiexec.hydra)
#   MPIRUN_ARGS more launcher options, split on blanks (hosts, mapping, --allow-run-as-root)
#   PGRUSH      the pgrush program on every host (default: pgrush on PATH)
#   PGRUSH_OUT  the results directory (default: ./pgrush-mpi-DATE), on a file system every host
#               sees; it gets run.shardI.json per shard, then merged.json and merged.txt
set -euo pipefail

if [ $# -lt 1 ] || ! [[ $1 =~ ^[1-9][0-9]*$ ]]; then
    echo "usage: $0 RANKS [pgrush options...]" >&2
    exit 2
fi
ranks=$1
shift
MPIRUN=${MPIRUN:-mpirun}
PGRUSH=${PGRUSH:-pgrush}
OUT=${PGRUSH_OUT:-$PWD/pgrush-mpi-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT"

read -r -a launcher_args <<<"${MPIRUN_ARGS:-}"
# Open MPI passes only the variables named with -x to ranks on other hosts; MPICH's Hydra
# passes the whole environment by default (and has no -x).
if "$MPIRUN" --version 2>&1 | grep -q 'Open MPI'; then
    for name in $(compgen -e); do
        case $name in PG*) launcher_args+=(-x "$name") ;; esac
    done
fi

"$MPIRUN" -np "$ranks" "${launcher_args[@]}" "$PGRUSH" --json "$OUT/run.json" "$@"

shards=()
for ((i = 0; i < ranks; i++)); do
    shards+=("$OUT/run.shard$i.json")
done
"$PGRUSH" merge "${shards[@]}" --json "$OUT/merged.json" | tee "$OUT/merged.txt"
