# Helpers for the bbrpcap and bbrplot tests. Load after helpers:
#   load helpers
#   load bbrpcap_helpers
# Namespaces are named pc-<BATS_ROOT_PID>-<tag>-a/-b; TCP ports 42000-42999.

PC_FIX=$TK_ROOT/tests/fixtures/pcap
PC_VLAN_OBJ=$TK_ROOT/build/gen/pcap_vlan.bpf.o

# frames and wire bytes tshark counts for each direction given (SPORT DPORT
# pairs), "FRAMES BYTES" a line each, in their order, from io,stat over the
# whole capture: one pass with a column per direction, as each tshark takes
# 0.3 s or more to start and a capture holds up to 8 directions
pc_tshark_dirs() {
	local file=$1 filters=()
	shift
	while [ $# -ge 2 ]; do
		filters+=("tcp.srcport==$1&&tcp.dstport==$2")
		shift 2
	done
	tshark -r "$file" -q -z "io,stat,0,$(IFS=,; echo "${filters[*]}")" 2>/dev/null |
		awk -F'|' '/<>/ { for (i = 3; i < NF; i += 2) { f = $i; b = $(i + 1); gsub(/ /, "", f); gsub(/ /, "", b); print f, b } }'
}

# FILE LINE...: each line "ID A B PKTS_AB BYTES_AB PKTS_BA BYTES_BA" (a flow
# as bbrpcap lists it) against tshark's count of its two directions; a
# differing direction is named, and the status is 1
pc_flows_agree() {
	local file=$1 l id a b pab bab pba bba dirs=() seen i=0 rc=0
	shift
	for l in "$@"; do
		read -r id a b _ <<< "$l"
		dirs+=("${a##*:}" "${b##*:}" "${b##*:}" "${a##*:}")
	done
	mapfile -t seen < <(pc_tshark_dirs "$file" "${dirs[@]}")
	for l in "$@"; do
		read -r id a b pab bab pba bba <<< "$l"
		[ "${seen[i]:-}" = "$pab $bab" ] || { echo "# flow $id A>B: tshark ${seen[i]:-nothing}, bbrpcap $pab $bab"; rc=1; }
		[ "${seen[i + 1]:-}" = "$pba $bba" ] || { echo "# flow $id B>A: tshark ${seen[i + 1]:-nothing}, bbrpcap $pba $bba"; rc=1; }
		i=$((i + 2))
	done
	return $rc
}

# tshark's conv,tcp byte formatting (format_size, SI, integer division)
pc_tshark_size() {
	local b=$1
	if [ "$b" -ge 10000000000000 ]; then echo "$((b / 1000000000000)) TB"
	elif [ "$b" -ge 10000000000 ]; then echo "$((b / 1000000000)) GB"
	elif [ "$b" -ge 10000000 ]; then echo "$((b / 1000000)) MB"
	elif [ "$b" -ge 10000 ]; then echo "$((b / 1000)) kB"
	else echo "$b bytes"
	fi
}

# the byte offset of frame K's record in a little-endian pcap file
pc_pcap_offset() {
	local f=$1 k=$2 off=24 i caplen
	for ((i = 1; i < k; i++)); do
		caplen=$(od -An -t u4 -j $((off + 8)) -N4 "$f" | tr -d ' ')
		off=$((off + 16 + caplen))
	done
	echo "$off"
}

# overwrite 4 bytes at OFFSET of FILE with the little-endian u32 VALUE
pc_poke32() {
	local f=$1 off=$2 v=$3
	printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x' $((v & 255)) $(((v >> 8) & 255)) $(((v >> 16) & 255)) $(((v >> 24) & 255)))" |
		dd of="$f" bs=1 seek="$off" conv=notrunc status=none
}

# a CSV column by name: pc_csv_col FILE NAME prints the column index (1-based)
pc_csv_col() {
	head -1 "$1" | tr ',' '\n' | grep -nx "$2" | cut -d: -f1
}

# start "iperf3 -s -1" on PORT in NS and wait for it to listen
pc_iperf_server() {
	local ns=$1 port=$2
	ip netns exec "$ns" timeout 60 iperf3 -s -1 -p "$port" >/dev/null 2>&1 &
	tk_wait_listen "$port" 5 "$ns"
}

# start tcpdump in NS (tk_tcpdump_start: -U, immediate, waited for) writing
# FILE, as root (-Z: its -C files go in root's test directories); sets PC_TCPDUMP_PID
pc_tcpdump_start() {
	local ns=$1 file=$2
	shift 2
	tk_tcpdump_start "$ns" "$file" -Z root -q "$@" || return 1
	PC_TCPDUMP_PID=$TK_TCPDUMP_PID
	PC_TCPDUMP_ERR[$TK_TCPDUMP_PID]=$file.err
}
declare -gA PC_TCPDUMP_ERR

# stop tcpdump PID (default: the last started) once it has written every packet
# the kernel gave it (scripts/tcpdump-drain.sh, up to 20 s): stopped at once, a
# busy tcpdump loses the capture's tail. Its count line ("N packets dropped by
# kernel") stays in FILE.err for pc_tcpdump_dropped
pc_tcpdump_stop() {
	local pid=${1:-$PC_TCPDUMP_PID}
	"$TK_ROOT/scripts/tcpdump-drain.sh" wait "$pid" "${PC_TCPDUMP_ERR[$pid]}" 20 2>/dev/null
	kill -TERM "$pid" 2>/dev/null
	timeout 10 tail --pid="$pid" -f /dev/null 2>/dev/null || true
}

# the packets the kernel dropped before tcpdump (FILE's capture) read them, by
# its own count at exit; empty when it gave none
pc_tcpdump_dropped() {
	sed -n 's/^\([0-9][0-9]*\) packets\{0,1\} dropped by kernel$/\1/p' "$1.err" | tail -1
}

# tag every frame on the veth pair NS_A/DEV_A <-> NS_B/DEV_B with VLAN 100
pc_vlan_pair() {
	local ns dev
	for side in "$1 $2" "$3 $4"; do
		read -r ns dev <<<"$side"
		ip netns exec "$ns" tc qdisc add dev "$dev" clsact || return 1
		ip netns exec "$ns" tc filter add dev "$dev" egress bpf da obj "$PC_VLAN_OBJ" sec tc/push || return 1
		ip netns exec "$ns" tc filter add dev "$dev" ingress bpf da obj "$PC_VLAN_OBJ" sec tc/pop || return 1
	done
}

# bbrtrace with the struct_ops backend, writing JSON lines to FILE, with more
# ARGS; returns once it traces. One bbr_traced can be registered machine-wide:
# while another tracer holds it, wait and retry (up to 3 minutes). Sets PC_BT_PID.
pc_bbrtrace_start() {
	local file=$1 i k
	shift
	for ((i = 0; i < 180; i++)); do
		bbrtrace --backend struct_ops --format json -o "$file" "$@" 2>"$file.err" &
		PC_BT_PID=$!
		for ((k = 0; k < 200; k++)); do
			grep -q "tracing flows" "$file.err" && return 0
			kill -0 "$PC_BT_PID" 2>/dev/null || break
			sleep 0.05
		done
		wait "$PC_BT_PID" 2>/dev/null
		grep -q "already registered" "$file.err" || { echo "# bbrtrace: $(cat "$file.err")" >&2; return 1; }
		sleep 1
	done
	echo "# bbr_traced stayed busy for 3 minutes" >&2
	return 1
}

pc_bbrtrace_stop() {
	kill -INT "$PC_BT_PID" 2>/dev/null
	timeout 20 tail --pid="$PC_BT_PID" -f /dev/null 2>/dev/null || true
}

# "FRAME ACK" for every frame of a TCP-only capture, read by tcpdump (absolute
# sequence numbers; frame numbers count from 1 like Wireshark's)
pc_frame_acks() {
	tcpdump -r "$1" -nn -S -tt 2>/dev/null |
		awk '{ n++; a = ""; for (i = 1; i < NF; i++) if ($i == "ack") { a = $(i + 1); sub(/,$/, "", a) } print n, a, $1 }'
}

# "WIDTH HEIGHT COLOURS MISSING" of a PNG: decoded here (zlib and the five
# scanline filters, 8-bit greyscale/RGB/RGBA), without trusting the writer.
# MISSING counts the colours given as more arguments (rrggbb) that no pixel has.
pc_png_info() {
	/usr/bin/python3 - "$@" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG signature"
pos, idat, ihdr = 8, b"", None
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        ihdr = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
w, h, depth, ctype, _, _, interlace = ihdr
assert depth == 8 and interlace == 0 and ctype in (0, 2, 4, 6), "unsupported PNG layout"
bpp = {0: 1, 2: 3, 4: 2, 6: 4}[ctype]
raw, stride = zlib.decompress(idat), w * bpp
prev, colours, i = bytearray(stride), set(), 0
for _ in range(h):
    f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
    i += 1 + stride
    for x in range(stride):
        a = line[x - bpp] if x >= bpp else 0
        b = prev[x]
        c = prev[x - bpp] if x >= bpp else 0
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + b) & 255
        elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    colours.update(bytes(line[k:k + bpp]) for k in range(0, stride, bpp))
    prev = line
rgb = {c[:3] for c in colours}
missing = [x for x in sys.argv[2:] if bytes.fromhex(x) not in rgb]
for x in missing:
    print("# no pixel of colour #" + x, file=sys.stderr)
print(w, h, len(colours), len(missing))
PY
}

# "WIDTH HEIGHT COLOURS" of an SVG: its size attributes and the distinct
# colours it strokes or fills with
pc_svg_info() {
	local w h n
	w=$(tr '\n' ' ' < "$1" | grep -o '<svg[^>]*' | grep -o ' width="[0-9]*' | head -1 | tr -dc 0-9)
	h=$(tr '\n' ' ' < "$1" | grep -o '<svg[^>]*' | grep -o ' height="[0-9]*' | head -1 | tr -dc 0-9)
	n=$(grep -oE "(stroke|fill|color)=['\"] ?(rgb\([0-9, ]+\)|#[0-9a-fA-F]{6})" "$1" |
		sed -E "s/^[a-z]+=['\"] ?//; s/ //g" | tr 'A-F' 'a-f' | sort -u | wc -l)
	echo "$w $h $n"
}

# pc_cut_lines FILE N OUT: FILE's first N lines, then the first 100 bytes of
# line N+1 without a newline: a JSON-lines file as its writer (bbrtrace -o,
# udpdwell -o) leaves it while still writing
pc_cut_lines() {
	{ head -n "$2" "$1"; sed -n "$(($2 + 1))p" "$1" | head -c 100; } > "$3"
}
