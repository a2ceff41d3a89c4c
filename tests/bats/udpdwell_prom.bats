#!/usr/bin/env bats
# udpdwell --prometheus: the page passes promtool, and a real Prometheus
# server (Debian's) scrapes it and returns the dwell histogram through its
# HTTP API. Everything on loopback; the Prometheus server gets a temporary
# configuration and storage directory, and is killed at the end.

load helpers
load ../fixtures/udpdwell/helpers

NS=ud-${BATS_ROOT_PID}-prom

setup_file() {
	requires root btf netns jq ss prometheus promtool curl
	ud_netns "$NS"
}

teardown_file() {
	tk_cleanup
}

teardown() {
	[ -n "${PROM_PID:-}" ] && kill "$PROM_PID" 2>/dev/null
	ud_kill_all
	ip netns pids "$NS" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
	if [ -n "${PROM_PID:-}" ]; then
		for ((i = 0; i < 50; i++)); do kill -0 "$PROM_PID" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$PROM_PID" 2>/dev/null || true
	fi
	return 0
}



@test "promtool check metrics accepts the page; other paths are 404" {
	port=$(tk_free_tcp_port 41330)
	ud_start -p 41330 --interval 1 --prometheus "127.0.0.1:$port"
	grep -q "serving Prometheus metrics on http://127.0.0.1:$port/metrics" "$UD_ERR"
	ud_slow_reader_traffic "$NS" 41330 1
	sleep 2.5
	curl -sf "http://127.0.0.1:$port/metrics" > "$BATS_TEST_TMPDIR/metrics"
	tk_run promtool check metrics < "$BATS_TEST_TMPDIR/metrics"
	expect_status 0
	grep -q '^udp_socket_dwell_seconds_bucket{port="41330",addr="127.0.0.1",pid="[0-9]*",comm="sfu_echo",le="+Inf"} 100$' \
		"$BATS_TEST_TMPDIR/metrics" || { cat "$BATS_TEST_TMPDIR/metrics"; false; }
	grep -q '^# TYPE udp_socket_drops_total counter$' "$BATS_TEST_TMPDIR/metrics"
	grep -q '^udp_socket_state{port="41330",' "$BATS_TEST_TMPDIR/metrics"
	tk_run curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/"
	expect_equal "$output" 404 "HTTP status of a path other than /metrics"
	ud_stop
}

@test "a real Prometheus server scrapes udpdwell and its API returns the dwell histogram" {
	exporter=$(tk_free_tcp_port 41340)
	ud_start -p 41341 --interval 1 --prometheus "127.0.0.1:$exporter"
	dir=$BATS_TEST_TMPDIR/prom
	mkdir -p "$dir/data"
	sed "s/@TARGET@/127.0.0.1:$exporter/" "$TK_ROOT/tests/fixtures/udpdwell/prometheus.yml.in" > "$dir/prometheus.yml"
	tk_run promtool check config "$dir/prometheus.yml"
	expect_status 0
	tk_prometheus_start "$dir" $((exporter + 2)) || return 1
	web=$TK_PROM_WEB
	ud_slow_reader_traffic "$NS" 41341 6
	q='udp_socket_dwell_seconds_bucket{port="41341",comm="sfu_echo"}'
	ok=0
	for ((i = 0; i < 60; i++)); do
		curl -sf --get "http://127.0.0.1:$web/api/v1/query" --data-urlencode "query=$q" \
			> "$dir/answer" || true
		if [ "$(jq '.data.result | length' "$dir/answer" 2>/dev/null)" = 9 ] &&
			[ "$(jq '[.data.result[] | select(.metric.le=="+Inf") | .value[1] | tonumber] | .[0]' "$dir/answer")" -gt 0 ]; then
			ok=1
			break
		fi
		sleep 0.5
	done
	[ "$ok" = 1 ] || { cat "$dir/answer" "$dir/log"; false; }
	# the nine le edges, in seconds, as Prometheus stored them
	[ "$(jq -c '[.data.result[].metric.le | if . == "+Inf" then 1e9 else tonumber end] | sort' "$dir/answer")" = \
		'[1e-05,5e-05,0.0001,0.0005,0.001,0.005,0.01,0.05,1000000000]' ] || { cat "$dir/answer"; false; }
	# and PromQL can work with it
	curl -sf --get "http://127.0.0.1:$web/api/v1/query" \
		--data-urlencode 'query=histogram_quantile(0.99, sum by (le) (udp_socket_dwell_seconds_bucket{port="41341"}))' \
		> "$dir/p99"
	expect_equal "$(jq -r .status "$dir/p99")" success "status of the p99 query"
	expect_equal "$(jq '.data.result | length' "$dir/p99")" 1 "series in the p99 result"
	ud_stop
}
