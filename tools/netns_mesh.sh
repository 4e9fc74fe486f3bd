#!/bin/bash
# Two "hosts" on one machine: two Linux network namespaces joined by one veth pair, each with its
# own network stack, and Open MPI's TCP transport between them (docs/scale_out.md).
# Needs root and Debian's iproute2 + openmpi-bin only.
#
#   netns_mesh.sh up ID            make namespaces ID-h0 / ID-h1, veth IDa / IDb, 10.237.0.1/.2
#   netns_mesh.sh shape ID PROFILE shape both ends: 100g (100 Gb/s 5 us), 10g (10 Gb/s 50 us),
#                                  1g (1 Gb/s 200 us), none; rate with tbf, delay with netem
#                                  where the kernel has sch_netem (prints what it applied)
#   netns_mesh.sh cut ID           `ip link set down` on host 1's end (a lost host)
#   netns_mesh.sh run ID ARGS...   mpiexec -np 2 ARGS across the two hosts (rank 0 on h0)
#   netns_mesh.sh down ID          kill what runs in the namespaces, delete them (idempotent)
#   netns_mesh.sh agent HOST CMD   Open MPI's plm_rsh_agent: runs CMD inside namespace HOST
#   netns_mesh.sh check            exit 0 if namespaces can be made here (prints why not)
#
# ID: 1-8 characters [a-z0-9] (interface names are at most 15 characters); unique per run.
set -euo pipefail

SELF="$(readlink -f "$0")"
SUBNET=10.237.0.0/24

ns() { echo "meshnn-$1-h$2"; }

check_id() {
  [[ "$1" =~ ^[a-z0-9]{1,8}$ ]] || { echo "netns_mesh: bad ID '$1' (1-8 of [a-z0-9])" >&2; exit 2; }
}

# Bytes per second and one-way delay of a profile name.
profile() {
  case "$1" in
    100g) echo "100gbit 5us" ;;
    10g) echo "10gbit 50us" ;;
    1g) echo "1gbit 200us" ;;
    none) echo "none none" ;;
    *) echo "netns_mesh: unknown profile '$1' (100g, 10g, 1g, none)" >&2; exit 2 ;;
  esac
}

up() {
  local id=$1 a b
  a=$(ns "$id" 0) b=$(ns "$id" 1)
  ip netns add "$a"
  ip netns add "$b"
  ip link add "${id}a" type veth peer name "${id}b"
  ip link set "${id}a" netns "$a"
  ip link set "${id}b" netns "$b"
  ip -n "$a" addr add 10.237.0.1/24 dev "${id}a"
  ip -n "$b" addr add 10.237.0.2/24 dev "${id}b"
  for n in "$a" "$b"; do ip -n "$n" link set lo up; done
  ip -n "$a" link set "${id}a" up
  ip -n "$b" link set "${id}b" up
  # Both ends report carrier before anyone connects.
  for _ in $(seq 50); do
    ip -n "$b" link show "${id}b" | grep -q LOWER_UP && break
    sleep 0.02
  done
}

# Rate (tbf) and delay (netem, when the kernel has it) on one device, replacing what was there.
shape_dev() {
  local n=$1 dev=$2 rate=$3 delay=$4
  ip netns exec "$n" tc qdisc del dev "$dev" root 2>/dev/null || true
  [ "$rate" = none ] && return 0
  # tbf's bucket must hold at least one timer tick of traffic (HZ >= 100): rate / 100.
  local bits=${rate%gbit}
  local burst=$((bits * 1000000000 / 8 / 100))
  if ip netns exec "$n" tc qdisc add dev "$dev" root handle 1: netem delay "$delay" 2>/dev/null; then
    ip netns exec "$n" tc qdisc add dev "$dev" parent 1: handle 2: tbf rate "$rate" \
      burst "$burst" latency 50ms
    echo "netns_mesh: $dev: netem delay $delay + tbf rate $rate"
  else
    ip netns exec "$n" tc qdisc add dev "$dev" root tbf rate "$rate" burst "$burst" latency 50ms
    echo "netns_mesh: $dev: tbf rate $rate; NO delay (this kernel has no sch_netem)"
  fi
}

shape() {
  local id=$1 rate delay
  read -r rate delay <<<"$(profile "$2")"
  shape_dev "$(ns "$id" 0)" "${id}a" "$rate" "$delay"
  shape_dev "$(ns "$id" 1)" "${id}b" "$rate" "$delay"
}

down() {
  local id=$1 n
  for h in 0 1; do
    n=$(ns "$id" "$h")
    ip netns list | grep -qw "$n" || continue
    # Whatever still runs there (a rank or daemon stuck on a cut link) ends with the namespace.
    for pid in $(ip netns pids "$n" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
    ip netns del "$n" || true
    rm -rf "/tmp/$n.ompi"
  done
  ip link del "${id}a" 2>/dev/null || true
}

run() {
  local id=$1
  shift
  # TCP between the namespaces only (no shared memory, no other fabric), over the veth subnet.
  exec ip netns exec "$(ns "$id" 0)" env OMPI_MCA_btl=tcp,self OMPI_MCA_mtl='^ofi,psm' \
    OMPI_MCA_btl_tcp_if_include=$SUBNET OMPI_MCA_oob_tcp_if_include=$SUBNET \
    OMPI_MCA_plm_rsh_agent="$SELF agent" OMPI_MCA_rmaps_base_oversubscribe=1 \
    mpiexec.openmpi --allow-run-as-root --oversubscribe \
    --host "$(ns "$id" 0):1,$(ns "$id" 1):1" -np 2 "$@"
}

check() {
  command -v ip >/dev/null || { echo "no ip (Debian package iproute2)"; exit 1; }
  command -v mpiexec.openmpi >/dev/null || { echo "no mpiexec.openmpi (openmpi-bin)"; exit 1; }
  local probe="meshnn-probe$$"
  if ! err=$(ip netns add "$probe" 2>&1); then
    echo "cannot make a network namespace: $err"
    exit 1
  fi
  ip netns del "$probe"
}

cmd=${1:-}
shift || true
case "$cmd" in
  up) check_id "$1"; up "$1" ;;
  shape) check_id "$1"; shape "$1" "$2" ;;
  cut) check_id "$1"; ip -n "$(ns "$1" 1)" link set "${1}b" down ;;
  run) check_id "$1"; run "$@" ;;
  down) check_id "$1"; down "$1" ;;
  agent)
    # Open MPI calls `agent HOST orted ARGS...` (ARGS already quoted for a remote shell).
    host=$1
    shift
    # Both "hosts" share /tmp and the machine's host name: each daemon gets its own Open MPI
    # session directory, or the two race creating the same one ("File exists" in session_dir.c).
    exec ip netns exec "$host" env OMPI_MCA_orte_tmpdir_base="/tmp/$host.ompi" /bin/sh -c "$*"
    ;;
  check) check ;;
  *) sed -n '2,16p' "$SELF"; exit 2 ;;
esac
