#!/usr/bin/env bash
# Two "hosts" on one machine: network namespaces joined by a veth pair, for multi-node tests of
# torch.distributed (tests/test_distributed_hosts.py) without a second machine.
#
#   scripts/two_hosts.sh up            make them (removing leftovers of an earlier run first)
#   scripts/two_hosts.sh down          remove them; nothing to remove is not an error
#   scripts/two_hosts.sh status        show the namespaces and their addresses
#   scripts/two_hosts.sh run CMD...    up, run CMD, then down whatever CMD's outcome
#
# Host i is namespace ${AXON_NS_PREFIX}i with lo and one link named $AXON_NS_LINK at
# ${AXON_NS_SUBNET}.(i+1)/24. The link has the same name in both namespaces, so one
# GLOO_SOCKET_IFNAME=$AXON_NS_LINK serves every rank: without it Gloo takes the address the
# machine's hostname resolves to, which does not exist inside the namespaces.
# Needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN) and iproute2.
set -euo pipefail

PREFIX=${AXON_NS_PREFIX:-axon-host}
LINK=${AXON_NS_LINK:-axon0}
SUBNET=${AXON_NS_SUBNET:-10.77.0}
HOSTS=2

ns() { echo "${PREFIX}$1"; }

# `ip netns list` prints "NAME" or "NAME (id: N)"; compare whole names only.
exists() { ip netns list | awk '{print $1}' | grep -qxF "$1"; }

down() {
    local i
    for ((i = 0; i < HOSTS; i++)); do
        # Deleting a namespace deletes the veth end inside it, and with it the peer.
        if exists "$(ns "$i")"; then
            ip netns delete "$(ns "$i")"
        fi
    done
    # An interrupted `up` can leave the pair's first end in this namespace.
    if ip link show "${PREFIX}-tmp0" >/dev/null 2>&1; then
        ip link delete "${PREFIX}-tmp0"
    fi
}

up() {
    down
    local i
    for ((i = 0; i < HOSTS; i++)); do
        ip netns add "$(ns "$i")"
        ip -n "$(ns "$i")" link set lo up
    done
    # Made here under temporary names (unique in this namespace), then moved and renamed: older
    # iproute2 cannot create both ends directly inside other namespaces.
    ip link add "${PREFIX}-tmp0" type veth peer name "${PREFIX}-tmp1"
    for ((i = 0; i < HOSTS; i++)); do
        ip link set "${PREFIX}-tmp$i" netns "$(ns "$i")"
        ip -n "$(ns "$i")" link set "${PREFIX}-tmp$i" name "$LINK"
        ip -n "$(ns "$i")" addr add "${SUBNET}.$((i + 1))/24" dev "$LINK"
        ip -n "$(ns "$i")" link set "$LINK" up
    done
}

status() {
    local i
    for ((i = 0; i < HOSTS; i++)); do
        if exists "$(ns "$i")"; then
            echo "$(ns "$i"):"
            ip -n "$(ns "$i")" -brief addr show
        else
            echo "$(ns "$i"): absent"
        fi
    done
}

case "${1:-}" in
up) up ;;
down) down ;;
status) status ;;
run)
    shift
    trap down EXIT
    up
    "$@"
    ;;
*)
    echo "usage: $0 up | down | status | run CMD..." >&2
    exit 2
    ;;
esac
