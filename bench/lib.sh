# shellcheck shell=bash
# What the benchmarks share: the bbr_traced lock, and a pair of namespaces
# joined by a veth, made and removed. Sourced by bench/NN-*.sh, after
# their `cd` to the project's root.

# One bbr_traced per machine: the tests, repro/dip.sh and the soak hold this
# lock while theirs is registered (tests/bats/helpers.bash, scripts/soak.sh)
BENCH_LOCK=/run/lock/bbrkit-bbr_traced.lock

# holds BENCH_LOCK on descriptor 9 until the benchmark exits, so that no
# other run registers bbr_traced between its runs; gives up after 30 min
bench_lock_bbr_traced() {
	exec 9> "$BENCH_LOCK"
	flock -w 1800 9 && return 0
	echo "bbr_traced is in use by another run for 30 min: giving up"
	exit 1
}

# bench_pair_up NS NET: namespaces NS-a and NS-b, their loopbacks up, joined
# by veth0 (NET.1/24, in NS-a) and veth1 (NET.2/24, in NS-b); NET is the
# first three bytes of an IPv4 address, e.g. 10.203.0. Exits on failure.
bench_pair_up() {
	local ns=$1 net=$2
	ip netns add "$ns-a" && ip netns add "$ns-b" || exit 1
	ip -n "$ns-a" link set lo up && ip -n "$ns-b" link set lo up &&
		ip -n "$ns-a" link add veth0 type veth peer name veth1 netns "$ns-b" &&
		ip -n "$ns-a" addr add "$net.1/24" dev veth0 && ip -n "$ns-b" addr add "$net.2/24" dev veth1 &&
		ip -n "$ns-a" link set veth0 up && ip -n "$ns-b" link set veth1 up || exit 1
}

# bench_pair_down NS: kills what runs in NS-a and NS-b, and deletes them
bench_pair_down() {
	local ns
	for ns in "$1-a" "$1-b"; do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done
}
