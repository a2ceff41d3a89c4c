#!/usr/bin/env bats
# README.md's typical session, end to end as written, across namespaces, and
# repro/README.md's runs (see docs.bats for the machinery). Both need
# bbr_traced here (bbrtrace's struct_ops backend), one at a time on a machine:
# the file holds the lock.

load helpers
load docs_helpers

# the lock for the whole file: taken per test, each test queued again
# behind the other runs of the machine
setup_file() {
	doc_lock
	tk_bpffs_note
}

teardown_file() {
	tk_bpffs_restore
	tk_unlock_bbr_traced
}

setup() {
	requires root netns bbr struct_ops btf jq tc
	doc_setup
}

teardown() {
	doc_teardown
}

SESSION=README.md
INGEST=10.77.2.2:1935
# the first run pushes (DOC_PUSH_PART s at a time) until the trace holds this
# many delayed_ack collapses that throttled (a verdict in the plural, as the README's), for
# SESSION_PUSH_MAX s at most
SESSION_DACKS=3
SESSION_PUSH_MAX=45
# the push after the fix: the README's table says 0 delayed_ack collapses in
# every 30 s run with quickack on
SESSION_PUSH_AFTER=10

# delayed_ack collapse records in trace $1 so far
dack_count() { grep '"type":"collapse"' "$1" 2>/dev/null | grep -c '"cause":"delayed_ack"'; }
# of them, those that throttled the stream: the README's verdict and join
# lines show those (join lists the throttling collapses first)
dack_thr_count() { grep '"type":"collapse"' "$1" 2>/dev/null | grep '"cause":"delayed_ack"' | grep -c '"impact":"throttling"'; }

# the README's push, `repro/lab.sh push` (pushsim to the ingest server's port
# 1935, its receiver acknowledging every 64 KB as RTMP's, so that its kernel
# delays the ACKs of each frame's tail), is the scenario the watchers watch
doc_is_scenario() { [[ $1 =~ /repro/lab\.sh\ .*push$ ]]; }

# the README's push for $1 s, while every watcher still runs
session_push() { doc_group_alive && doc_run "$DOC_SCENARIO --duration $1"; }

# the first run pushes DOC_PUSH_PART s at a time until the trace holds
# SESSION_DACKS throttling delayed_ack collapses; the second, after the fix, once
doc_during() {
	local trace done_s=0
	[ -n "${DOC_SCENARIO:-}" ] || { echo "# no push (repro/lab.sh push) after the block's watchers"; return 1; }
	[ "$SESSION_RUN" = 1 ] || { session_push "$SESSION_PUSH_AFTER"; return; }
	trace=$DOC_CWD/$(doc_opt "$(doc_group_cmds | grep -m1 bbrtrace)" -o --output)
	while [ "$done_s" -lt "$SESSION_PUSH_MAX" ]; do
		session_push "$DOC_PUSH_PART" || return 1
		done_s=$((done_s + DOC_PUSH_PART))
		[ "$(dack_thr_count "$trace")" -ge "$SESSION_DACKS" ] && return 0
	done
	echo "# fewer than $SESSION_DACKS throttling delayed_ack collapses after $SESSION_PUSH_MAX s of pushes"
	return 1
}

# the section's ```sh blocks: the sender's host's, then the receiver's
session_blocks() { doc_list "$SESSION" | awk -F'\t' '$5 == "A typical session" {print $3}' | uniq; }

# the text blocks after block $1, by their opening lines
session_texts() { "$DOC_TOOL" texts "$SESSION" | awk -F'\t' -v b="$1" '$4 == b {print $3}' | uniq; }

# the README's command normalised: no sudo, programs by name
session_plain() { doc_drop_sudo "$1" | sed -E 's#(^| )bin/#\1#g'; }

# lines of file $2 matching $1, each against text block $3
session_each_matches() {
	local line
	grep -F -- "$1" "$2" >"$DOC_LOG/lines" || { echo "# no '$1' line in $2"; return 1; }
	while IFS= read -r line; do
		printf '%s\n' "$line" >"$DOC_LOG/line"
		doc_match "$SESSION" "$3" "$DOC_LOG/line" || return 1
	done <"$DOC_LOG/lines"
}

@test "README.md: the typical session runs as written across namespaces; its fix removes the delayed-ACK collapses; restore undoes it" {
	ingest=$(doc_ns ingest)
	mapfile -t blocks < <(session_blocks)
	mapfile -t texts < <(session_texts "${blocks[0]}")
	[ ${#blocks[@]} -eq 4 ] && [ ${#texts[@]} -eq 2 ] ||
		{ echo "# expected the sender's block with two text blocks (verdict, join), the receiver's, the socket scopes', the lab's end"; return 1; }

	# 0, 1 and 2 on the sender's host: the lab's namespaces; trace and
	# capture a push until Ctrl-C, then join and plot; what they print
	# matches the README's text blocks
	SESSION_RUN=1
	doc_block "$SESSION" "${blocks[0]}"
	routes_before=$(ip -n "$ingest" route show)
	grep '^bbrtrace: verdict: ' "$DOC_TRANSCRIPT" >"$DOC_LOG/verdict"
	expect_cmp "$(wc -l <"$DOC_LOG/verdict")" -eq 1 "verdict lines in the transcript"
	doc_match "$SESSION" "${texts[0]}" "$DOC_LOG/verdict"
	# each of join's delayed_ack lines reads as the README's
	session_each_matches '; delayed_ack;' "$DOC_TRANSCRIPT" "${texts[1]}"

	# the fix, pasted from the verdict, with the namespace option the README's
	# receiver block gives, is the README's own command
	fix=$(sed -E 's/^[^`]*`([^`]+)`.*$/\1/' "$DOC_LOG/verdict")
	echo "# the verdict's fix: $fix" >&3
	readme_fix=
	while IFS=$'\t' read -r f n b s sec c; do
		[ "$b" = "${blocks[1]}" ] || continue
		ns_opt=$(grep -oE -- '--netns [^ ]+' <<<"$c")
		[ "$(session_plain "$c")" = "$fix $ns_opt" ] && { readme_fix=$n; break; }
	done < <(doc_list "$SESSION")
	[ -n "$readme_fix" ] || { echo "# no command '$fix --netns NS' in the receiver's block"; return 1; }
	echo "$SESSION:$readme_fix" >>"$DOC_RAN"
	DOC_TRANSCRIPT=
	doc_run "$(doc_substitute "$fix $ns_opt")"
	# a host route to the pusher alone: the route that covered it unchanged
	ip -n "$ingest" route show | grep -E '^10\.77\.1\.2 .* quickack 1( |$)' ||
		{ echo "# no host route with quickack 1 on the ingest back to 10.77.1.2:"; ip -n "$ingest" route show; return 1; }
	[ "$(ip -n "$ingest" route show | grep -v '^10\.77\.1\.2 ')" = "$routes_before" ] ||
		{ echo "# the fix changed other routes than the pusher's host route:"; ip -n "$ingest" route show; return 1; }

	# a new run in the same lab (up once): no delayed_ack collapse, no fix
	SESSION_RUN=2
	main_cwd=$DOC_CWD
	DOC_CWD=$DOC_CWD/after
	mkdir -p "$DOC_CWD"
	DOC_SKIP='/repro/lab\.sh .* up$' DOC_TEXT=0 doc_block "$SESSION" "${blocks[0]}"
	[ "$(dack_count "$DOC_CWD/trace.jsonl")" -eq 0 ] || { grep '^bbrtrace: verdict' "$DOC_TRANSCRIPT"; return 1; }
	if grep '^bbrtrace: verdict: .*Fix:' "$DOC_TRANSCRIPT"; then return 1; fi
	DOC_CWD=$main_cwd

	# the receiver block's other commands: restore, which puts the routes back
	while IFS=$'\t' read -r f n b s sec c; do
		[ "$b" = "${blocks[1]}" ] && [ "$n" != "$readme_fix" ] || continue
		echo "$SESSION:$n" >>"$DOC_RAN"
		doc_run "$(doc_substitute "$c")" "$s"
	done < <(doc_list "$SESSION")
	routes_after=$(ip -n "$ingest" route show)
	[ "$routes_after" = "$routes_before" ] || { diff <(echo "$routes_before") <(echo "$routes_after"); return 1; }

	# the socket scopes, as written, from the host's mounts: no route
	# changes, and after the block's restores nothing of them is left pinned
	DOC_HOST_MOUNTS=1 doc_block "$SESSION" "${blocks[2]}"
	grep -q 'now hold an ACK' "$DOC_TRANSCRIPT" || { echo "# the scope on port 1935 was not attached"; return 1; }
	[ "$(ip -n "$ingest" route show)" = "$routes_before" ] || { ip -n "$ingest" route show; return 1; }
	[ -z "$(ls -A /sys/fs/bpf/bbrkit/quickack 2> /dev/null)" ] || { ls /sys/fs/bpf/bbrkit/quickack; return 1; }

	# the lab's end: its three namespaces gone
	doc_block "$SESSION" "${blocks[3]}"
	if ip netns list | grep -E "^$(doc_ns)(pusher|rtr|ingest)( |$)"; then
		echo "# repro/lab.sh down left the namespaces above"
		return 1
	fi
	doc_all_run "$SESSION"
}

# each dip.sh run left what the README lists, for the scenario it was given
doc_after() {
	local out qa
	[[ $1 == *dip.sh* ]] || return 0
	out=$DOC_CWD/$(doc_opt "$1" --out)
	qa=$(doc_opt "$1" --quickack)
	jq -e --arg qa "$qa" '.type == "verdict" and .scenario.quickack == $qa' "$out/verdict.json" >/dev/null || return 1
	[ -s "$out/capture.pcap" ] && [ -s "$out/pushsim.json" ] && [ -s "$out/verdict.txt" ] || return 1
	echo "# quickack $qa: $(dack_count "$out/trace.jsonl") delayed_ack collapses; $(head -1 "$out/verdict.txt")" >&3
	[ "$qa" = off ] || [ "$(dack_count "$out/trace.jsonl")" -eq 0 ]
}

@test "repro/README.md: one run with quickack off, one with it on (shorter: see the substitution table)" {
	doc_readme repro/README.md
}
