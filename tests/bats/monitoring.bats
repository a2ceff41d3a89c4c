#!/usr/bin/env bats
# monitoring/: the Prometheus alerting rules pass promtool and fire on the
# series fixtures that should fire them (promtool test rules); the rules and
# the Grafana dashboard read only metrics that bbrtrace and udpdwell export,
# taken from their live /metrics pages; and a real Prometheus server that
# scrapes both tools, with the rules loaded, evaluates every dashboard
# expression and every rule without an error.

load helpers
load ../fixtures/udpdwell/helpers

NS=mon-${BATS_ROOT_PID}
MON=$TK_ROOT/monitoring
NAMES=$TK_ROOT/tests/tools/promnames.py

setup_file() {
	tk_lock_bbr_traced
	ud_netns "$NS"
}

teardown_file() {
	tk_cleanup
	tk_unlock_bbr_traced
}

teardown() {
	local p
	for p in ${PROM_PID:-} ${BT_PID:-}; do kill -INT "$p" 2>/dev/null; done
	ud_kill_all
	ip netns pids "$NS" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
	for p in ${PROM_PID:-} ${BT_PID:-}; do
		for ((i = 0; i < 50; i++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$p" 2>/dev/null || true
	done
	return 0
}



# bbrtrace --detect --prometheus on port $1, its stderr in $BATS_TEST_TMPDIR/bt.err
bt_start() {
	bbrtrace --detect --prometheus "127.0.0.1:$1" -f json -o /dev/null 2> "$BATS_TEST_TMPDIR/bt.err" &
	BT_PID=$!
	tk_wait_for "curl -sf http://127.0.0.1:$1/metrics > /dev/null" 30 ||
		{ cat "$BATS_TEST_TMPDIR/bt.err"; return 1; }
}

# the PromQL query $2 against the Prometheus at $1: the API's answer
prom_query() {
	curl -sf --get "http://$1/api/v1/query" --data-urlencode "query=$2"
}

@test "the rules and the dashboard read only metrics that bbrtrace and udpdwell export" {
	requires root btf bbr struct_ops yaml curl ss
	local bt ud
	bt=$(tk_free_tcp_port 41400)
	bt_start "$bt"
	ud=$(tk_free_tcp_port $((bt + 1)))
	ud_start -p 41450 --interval 1 --prometheus "127.0.0.1:$ud"
	curl -sf "http://127.0.0.1:$bt/metrics" > "$BATS_TEST_TMPDIR/bt.metrics"
	curl -sf "http://127.0.0.1:$ud/metrics" > "$BATS_TEST_TMPDIR/ud.metrics"
	"$NAMES" exported "$BATS_TEST_TMPDIR/bt.metrics" "$BATS_TEST_TMPDIR/ud.metrics" > "$BATS_TEST_TMPDIR/exported"
	"$NAMES" names "$MON/bbrkit.rules.yml" "$MON/bbrkit-dashboard.json" > "$BATS_TEST_TMPDIR/read"
	echo "# read: $(wc -l < "$BATS_TEST_TMPDIR/read") metrics, exported: $(wc -l < "$BATS_TEST_TMPDIR/exported")" >&3
	missing=$(comm -23 "$BATS_TEST_TMPDIR/read" "$BATS_TEST_TMPDIR/exported")
	[ -z "$missing" ] || { echo "# read but not exported: $missing"; return 1; }
	# and the name finder finds names: both tools' families are read
	grep -q '^bbrtrace_collapses_total$' "$BATS_TEST_TMPDIR/read"
	grep -q '^udp_socket_dwell_seconds_bucket$' "$BATS_TEST_TMPDIR/read"
	ud_stop
}

@test "a real Prometheus scraping both tools evaluates every dashboard expression and every rule without error" {
	requires root btf bbr struct_ops yaml curl ss prometheus jq
	local bt ud web dir e n=0
	bt=$(tk_free_tcp_port 41410)
	bt_start "$bt"
	ud=$(tk_free_tcp_port $((bt + 1)))
	ud_start -p 41451 --interval 1 --prometheus "127.0.0.1:$ud"
	dir=$BATS_TEST_TMPDIR/prom
	mkdir -p "$dir/data"
	cp "$MON/bbrkit.rules.yml" "$dir/"
	cat > "$dir/prometheus.yml" <<-YML
		global: { scrape_interval: 1s, scrape_timeout: 900ms, evaluation_interval: 1s }
		rule_files: [bbrkit.rules.yml]
		scrape_configs:
		  - job_name: bbrkit
		    static_configs: [{ targets: ['127.0.0.1:$bt', '127.0.0.1:$ud'] }]
	YML
	tk_run promtool check config "$dir/prometheus.yml"
	expect_status 0
	tk_prometheus_start "$dir" $((ud + 1)) || return 1
	web=$TK_PROM_WEB
	ud_slow_reader_traffic "$NS" 41451 8
	# a few scrapes of both, with datagrams waiting
	tk_wait_for "prom_query 127.0.0.1:$web 'count(udp_socket_dwell_seconds_count{port=\"41451\"} > 0) and count(bbrtrace_samples_total)' | jq -e '.data.result | length == 1' > /dev/null" 60 ||
		{ cat "$dir/log"; return 1; }
	sleep 4
	while IFS= read -r e; do
		e=${e//\$__rate_interval/10s}
		e=${e//\$instance/.*}
		prom_query "127.0.0.1:$web" "$e" > "$dir/answer" || { echo "# refused: $e"; cat "$dir/answer"; return 1; }
		[ "$(jq -r .status "$dir/answer")" = success ] || { echo "# $e"; cat "$dir/answer"; return 1; }
		n=$((n + 1))
	done < <("$NAMES" exprs "$MON/bbrkit-dashboard.json")
	echo "# $n dashboard expressions evaluated" >&3
	expect_cmp "$n" -ge 10 "dashboard expressions evaluated"
	# the dwell panels show the socket the traffic went to
	prom_query "127.0.0.1:$web" "$("$NAMES" exprs "$MON/bbrkit-dashboard.json" | grep -m1 histogram_quantile | sed 's/\$__rate_interval/10s/g; s/\$instance/.*/g')" > "$dir/p99"
	jq -e '[.data.result[] | select(.metric.port == "41451")] | length == 1' "$dir/p99"
	# every rule evaluated on real series, healthy
	curl -sf "http://127.0.0.1:$web/api/v1/rules" > "$dir/rules"
	expect_equal "$(jq '[.data.groups[].rules[]] | length' "$dir/rules")" 7 "rules prometheus loaded"
	jq -e '[.data.groups[].rules[] | select(.health != "ok")] | length == 0' "$dir/rules" || { cat "$dir/rules"; return 1; }
	ud_stop
}
