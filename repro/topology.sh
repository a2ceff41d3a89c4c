# repro/topology.sh: the lab's topology, one definition for dip.sh and
# lab.sh (sourced, not run). Three network namespaces joined by veth:
#
#   pusher  10.77.1.2 eth0 --- p0 10.77.1.1  router  10.77.2.1 v0 --- eth0 10.77.2.2  receiver
#
# The router forwards. The receiver reaches the pusher through the route
# 10.77.1.0/24, which is the route `quickack on --to 10.77.1.2` turns on;
# the pusher reaches the receiver through 10.77.2.0/24.

TOPO_PUSHER_NET=10.77.1.0/24
TOPO_PUSHER_ADDR=10.77.1.2
TOPO_RECV_ADDR=10.77.2.2

# builds the links, addresses and routes in the existing namespaces $1
# (pusher), $2 (router) and $3 (receiver); one ip process per namespace, as
# a process costs about 0.3 s on an emulated CPU
topo_build() {
	local push=$1 rtr=$2 recv=$3
	ip -n "$push" -batch - <<-EOF || return
		link set lo up
		link add eth0 type veth peer name p0 netns $rtr
		addr add $TOPO_PUSHER_ADDR/24 dev eth0
		link set eth0 up
		route add 10.77.2.0/24 via 10.77.1.1
	EOF
	ip -n "$recv" -batch - <<-EOF || return
		link set lo up
		link add eth0 type veth peer name v0 netns $rtr
		addr add $TOPO_RECV_ADDR/24 dev eth0
		link set eth0 up
		route add $TOPO_PUSHER_NET via 10.77.2.1
	EOF
	ip -n "$rtr" -batch - <<-EOF || return
		link set lo up
		addr add 10.77.1.1/24 dev p0
		addr add 10.77.2.1/24 dev v0
		link set p0 up
		link set v0 up
	EOF
	ip netns exec "$rtr" sysctl -qw net.ipv4.ip_forward=1
}

# namespace $1 is a router this file built: its p0 holds 10.77.1.1
topo_is_router() {
	ip -n "$1" -br addr show dev p0 2>/dev/null | grep -q ' 10\.77\.1\.1/24'
}
