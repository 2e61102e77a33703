# shellcheck shell=bash
# Sourced by scripts: a private switched network made only of network namespaces. The switch is a
# namespace holding a bridge; each host is a namespace whose eth0 is one end of a veth pair whose
# other end is a port of that bridge. Every link is created directly inside the namespaces, so
# nothing ever appears in (or is changed in) the root namespace, and deleting the namespaces
# removes every link with them.
#   netns_exists NS
#   netns_remove NS...                    stops what runs inside each NS (TERM, then KILL), deletes it
#   netns_add_switch SW                   namespace SW with bridge br0, up
#   netns_add_host SW NS ADDRESS/PREFIX   namespace NS, eth0 = ADDRESS, cabled to port NS's name on SW
# Failures print ip's message on stderr and return non-zero.

netns_exists() {
  [ -e "/run/netns/$1" ] || ip netns list 2>/dev/null | awk '{print $1}' | grep -qx -- "$1"
}

# The pids of the processes that run inside namespace NS (none when NS does not exist).
netns_pids() {
  netns_exists "$1" || return 0
  ip netns pids "$1" 2>/dev/null || true
}

netns_remove() {
  local ns pid pids deadline
  for ns in "$@"; do
    netns_exists "$ns" || continue
    pids="$(netns_pids "$ns")"
    if [ -n "$pids" ]; then
      for pid in $pids; do kill -TERM "$pid" 2>/dev/null || true; done
      deadline=$((SECONDS + 5))
      while [ -n "$(netns_pids "$ns")" ] && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
      for pid in $(netns_pids "$ns"); do kill -KILL "$pid" 2>/dev/null || true; done
    fi
    ip netns delete "$ns" 2>/dev/null || true
  done
  for ns in "$@"; do
    if netns_exists "$ns"; then
      echo "cannot delete network namespace $ns" >&2
      return 1
    fi
  done
}

netns_add_switch() {
  local sw="$1"
  ip netns add "$sw" || return 1
  ip -n "$sw" link set lo up || return 1
  ip -n "$sw" link add br0 type bridge || return 1
  # No spanning tree, no forwarding delay: the ports forward as soon as they are up.
  ip -n "$sw" link set br0 type bridge stp_state 0 forward_delay 0 2>/dev/null || true
  ip -n "$sw" link set br0 up || return 1
}

netns_add_host() {
  local sw="$1" ns="$2" address="$3"
  local port="${ns:0:15}"
  ip netns add "$ns" || return 1
  ip -n "$ns" link set lo up || return 1
  ip -n "$sw" link add "$port" type veth peer name eth0 netns "$ns" || return 1
  ip -n "$sw" link set "$port" master br0 || return 1
  ip -n "$sw" link set "$port" up || return 1
  ip -n "$ns" addr add "$address" dev eth0 || return 1
  ip -n "$ns" link set eth0 up || return 1
}
