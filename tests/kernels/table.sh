#!/usr/bin/env bash
# The README's "Kernels" table, from the last make test's own results
# (build/kernels/{host,LABEL}/*.tap and times): one row per suite and
# backend, one column per kernel, each cell "passed/run".
#
#   tests/kernels/table.sh [RESULTS]          prints the table (markdown)
#   tests/kernels/table.sh --update FILE      replaces the table between the
#                                             "kernel-table" markers in FILE
set -euo pipefail
cd "$(dirname "$0")/../.."
update=
if [ "${1:-}" = --update ]; then
	update=${2:?--update FILE}
	shift 2
fi
res=${1:-build/kernels}
cols=()
for k in $(awk '$1 !~ /^#/ && NF {print $1}' tests/kernels/kernels.conf) host; do
	[ -s "$res/$k/times" ] && ls "$res/$k"/*.tap > /dev/null 2>&1 && cols+=("$k")
done
[ ${#cols[@]} -gt 0 ] || { echo "table.sh: no results in $res: run make test first" >&2; exit 1; }

# "suite tag<TAB>passed<TAB>run" for one kernel's results
tally() {
	local f base suite tag
	for f in "$1"/*.tap; do
		base=$(basename "$f" .tap)
		base=${base#[0-9][0-9]-}
		case $base in kernel | guest) continue ;; esac
		suite=${base%%-*}
		tag=${base#"$suite"}
		tag=${tag#-}
		printf '%s%s\t%s\t%s\n' "$suite" "${tag:+ ($tag)}" \
			"$(grep -cE '^ok [0-9]+ ' "$f" | tr -d ' ')" "$(grep -cE '^(not )?ok [0-9]+ ' "$f" | tr -d ' ')"
	done
}

table() {
	local k rows row line
	printf '| suite (backend) |'
	for k in "${cols[@]}"; do
		printf ' %s |' "$( [ "$k" = host ] && echo "build host, $(awk '$1 == "kernel" {print $2}' "$res/$k/times")" ||
			awk '$1 == "kernel" {print $2}' "$res/$k/times")"
	done
	printf '\n|---|'
	for k in "${cols[@]}"; do printf -- '---|'; done
	printf '\n'
	rows=$(for k in "${cols[@]}"; do tally "$res/$k"; done | cut -f1 | sort -u)
	while read -r row; do
		printf '| `%s` |' "$row"
		for k in "${cols[@]}"; do
			line=$(tally "$res/$k" | awk -F'\t' -v r="$row" '$1 == r {print $2 "/" $3}')
			printf ' %s |' "${line:-—}"
		done
		printf '\n'
	done <<< "$rows"
	printf '| boot, total |'
	for k in "${cols[@]}"; do
		awk '$1 == "boot" {b = $2} $1 == "total" {t = $2}
			END {printf " %s%s s |", b != "" ? b " s, " : "", t}' "$res/$k/times"
	done
	printf '\n'
}

if [ -z "$update" ]; then
	table
	exit 0
fi
grep -q '<!-- kernel-table -->' "$update" && grep -q '<!-- /kernel-table -->' "$update" ||
	{ echo "table.sh: $update has no <!-- kernel-table --> ... <!-- /kernel-table --> markers" >&2; exit 1; }
tmp=$(mktemp)
table > "$tmp.table"
awk -v t="$tmp.table" '
	/<!-- kernel-table -->/ { print; while ((getline l < t) > 0) print l; skip = 1; next }
	/<!-- \/kernel-table -->/ { skip = 0 }
	!skip' "$update" > "$tmp"
mv "$tmp" "$update"
rm -f "$tmp.table"
