# Helpers of the repro suites that only the kernel matrix's guests run
# (repro_netem, repro_backends, repro_demo). Load after ../../bats/helpers.

# runs still going (BG_PIDS) after a failed test: TERM lets dip.sh and
# sweep.sh clean up, then KILL (bounded)
rp_stop_runs() {
	local p
	for p in ${BG_PIDS:-}; do
		kill -TERM "$p" 2>/dev/null
		for _ in $(seq 150); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$p" 2>/dev/null
	done
	BG_PIDS=
	return 0
}

# what must be as before a run: the default congestion control, bbr_traced
# unregistered, no namespace or process of the reproduction
leftovers() {
	echo "default cc: $(sysctl -n net.ipv4.tcp_congestion_control)"
	echo "available: $(tr ' ' '\n' < /proc/sys/net/ipv4/tcp_available_congestion_control | grep -x bbr_traced)"
	echo "struct_ops: $(bpftool struct_ops show 2>/dev/null | awk '{print $2}' | tr '\n' ' ')"
	echo "netns: $(ip netns list | awk '{print $1}' | grep -E '^rp-' | tr '\n' ' ')"
	echo "processes: $(ps -eo comm= | grep -xE 'bbrtrace|bbrtrace-guard|pushsim|tcpdump' | sort | tr '\n' ' ')"
}

# the lowest RTT a trace measured: netem's delay is a floor for it
min_rtt_us() {
	jq -s '[.[] | select(.type == "sample" and .rtt_us > 0) | .rtt_us] | min' "$1"
}

# the congestion control the push must have run under backend $1
push_cc_for() { if [ "$1" = struct_ops ]; then echo bbr_traced; else echo bbr; fi; }

# every delayed_ack record of trace $1 obeys the rule: not app-limited,
# rcv_interval_us >= 5 x snd_interval_us and >= 10 ms
delayed_ack_records_ok() {
	jq -e -s '[.[] | select(.type == "collapse" and .cause == "delayed_ack") |
		select(.is_app_limited != false or .rcv_interval_us < 5 * .snd_interval_us or
			.rcv_interval_us < 10000)] | length == 0' "$1" > /dev/null
}
