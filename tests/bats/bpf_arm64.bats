#!/usr/bin/env bats
# tier: check
# make bpf-arm64: every BPF program compiles for arm64 as well, with arm64's
# register layout (user_pt_regs, as bpf_tracing.h reads it) as CO-RE types and
# arm64's asm/ headers. No arm64 machine is at hand: this is a compile check.

load helpers

# one build into a directory of its own, with clang -H listing every header read
setup_file() {
	local out=$BATS_FILE_TMPDIR/bpf-arm64 rc=0
	make -C "$TK_ROOT" --no-print-directory -s bpf-arm64 BPF_ARM64="$out" CLANG="clang -H" \
		> "$BATS_FILE_TMPDIR/make.out" 2> "$BATS_FILE_TMPDIR/make.err" || rc=$?
	echo "$rc" > "$BATS_FILE_TMPDIR/make.rc"
}

setup() {
	OUT=$BATS_FILE_TMPDIR/bpf-arm64
}

@test "make bpf-arm64 builds every bpf/*.bpf.c into its own directory" {
	local src obj n=0
	if [ "$(cat "$BATS_FILE_TMPDIR/make.rc")" -ne 0 ]; then
		grep -v '^\.' "$BATS_FILE_TMPDIR/make.err" | head -40 | sed 's/^/# /'
		return 1
	fi
	for src in "$TK_ROOT"/bpf/*.bpf.c; do
		obj=$OUT/$(basename "$src" .c).o
		[ -s "$obj" ] || { echo "# missing: $obj"; return 1; }
		llvm-readelf -h "$obj" | grep -q 'Machine: *EM_BPF' || { echo "# not a BPF object: $obj"; return 1; }
		n=$((n + 1))
	done
	echo "# $n objects"
	expect_cmp "$n" -ge 9 "BPF objects built"
}

@test "the kprobe programs read arguments through arm64's user_pt_regs, not x86's pt_regs" {
	local obj
	for obj in bbrtrace_kprobe udpdwell_kprobe; do
		bpftool btf dump file "$OUT/$obj.bpf.o" > "$BATS_TEST_TMPDIR/$obj.btf"
		grep -q "STRUCT 'user_pt_regs' size=272 vlen=4" "$BATS_TEST_TMPDIR/$obj.btf" ||
			{ echo "# $obj: no arm64 user_pt_regs in its BTF"; return 1; }
		! grep -q "'di' type_id" "$BATS_TEST_TMPDIR/$obj.btf" ||
			{ echo "# $obj: x86's pt_regs (di) in an arm64 object"; return 1; }
	done
}

@test "the arm64 build reads arm64's asm/ headers and none of the build machine's" {
	local err=$BATS_FILE_TMPDIR/make.err
	grep -E '^\.+ .*/asm/types\.h$' "$err" | sed 's/^\.* //' | sort -u > "$BATS_TEST_TMPDIR/asm"
	cat "$BATS_TEST_TMPDIR/asm" | sed 's/^/# /'
	[ -s "$BATS_TEST_TMPDIR/asm" ]
	! grep -v aarch64 "$BATS_TEST_TMPDIR/asm" || false
	! grep -E '^\.+ .*x86' "$err" || false
}

@test "without arm64's asm/ headers, make bpf-arm64 says which package to install" {
	tk_run make -C "$TK_ROOT" --no-print-directory -s bpf-arm64 BPF_ARM64="$BATS_TEST_TMPDIR/out" \
		ARM64_ASM_INC="$BATS_TEST_TMPDIR/none"
	expect_status 2
	expect_stderr "arm64's asm/ headers are missing ($BATS_TEST_TMPDIR/none/asm/types.h)"
	expect_stderr "linux-libc-dev-arm64-cross"
	[ ! -e "$BATS_TEST_TMPDIR/out" ]
}
