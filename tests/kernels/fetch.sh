#!/usr/bin/env bash
# Resolve, download and unpack one of Debian's kernel images for the kernel
# matrix, once per machine, into a cache outside the repository.
#
#   tests/kernels/fetch.sh LABEL      LABEL is a line of tests/kernels/kernels.conf
#
# Prints the unpacked tree's directory on stdout (CACHE/VERSION, holding
# vmlinuz, config, label, and lib/modules/VERSION with its modules.dep). Nothing is
# installed on the host: the .deb is unpacked with dpkg-deb.
#
# Exit status: 0 ready; 4 the image cannot be had (the reason is one line on
# stderr). Environment: BBRKIT_KERNEL_CACHE (default /var/cache/bbrkit/kernels).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
label=${1:?usage: fetch.sh LABEL}
cache=${BBRKIT_KERNEL_CACHE:-/var/cache/bbrkit/kernels}

die() { echo "fetch.sh: $label: $*" >&2; exit 4; }

meta=$(awk -v l="$label" '$1 == l {print $2}' "$here/kernels.conf")
[ -n "$meta" ] || die "no such kernel in tests/kernels/kernels.conf"

# the image package the meta-package's candidate depends on, e.g.
# linux-image-amd64 -> linux-image-6.1.0-57-amd64
candidate() {
	apt-cache policy "$meta" 2>/dev/null | awk '/Candidate:/ {print $2}'
}
ver=$(candidate)
if [ -z "$ver" ] || [ "$ver" = "(none)" ]; then
	apt-get update -qq >/dev/null 2>&1 || true
	ver=$(candidate)
fi
image=
if [ -n "$ver" ] && [ "$ver" != "(none)" ]; then
	image=$(apt-cache show "$meta=$ver" 2>/dev/null |
		awk '/^Depends:/ {for (i = 2; i <= NF; i++) if ($i ~ /^linux-image-/) {sub(",", "", $i); print $i; exit}}')
fi
if [ -z "$image" ]; then
	# offline: the newest image already unpacked for this label
	old=$(grep -lx "$label" "$cache"/*/label 2>/dev/null | sort -V | tail -n 1 || true)
	old=${old%/label}
	[ -n "$old" ] && [ -e "$old/ready" ] || die "apt cannot resolve $meta (no package lists, or no network) and nothing is cached in $cache"
	echo "fetch.sh: $label: apt cannot resolve $meta; using the cached $(cat "$old/version")" >&2
	echo "$old"
	exit 0
fi
kver=${image#linux-image-}
dir=$cache/$kver
# one fetch of an image at a time: the matrix and a test beside it may both
# want it on a fresh machine (the lock goes with this process)
mkdir -p "$cache"
exec 9> "$cache/.lock-$kver"
flock 9
if [ -e "$dir/ready" ]; then
	echo "$dir"
	exit 0
fi

command -v dpkg-deb > /dev/null || die "dpkg-deb is missing"
command -v depmod > /dev/null || die "depmod is missing (Debian package kmod; run ./scripts/install-deps.sh)"
mkdir -p "$cache"
tmp=$(mktemp -d "$cache/.fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "fetch.sh: $label: downloading $image" >&2
(cd "$tmp" && apt-get download -q "$image" > /dev/null 2>"$tmp/apt.err") ||
	die "apt-get download $image failed: $(tail -n 1 "$tmp/apt.err")"
deb=$(ls "$tmp"/*.deb)
mkdir "$tmp/x"
dpkg-deb -x "$deb" "$tmp/x" || die "dpkg-deb -x $deb failed"
[ -e "$tmp/x/boot/vmlinuz-$kver" ] || die "$deb has no boot/vmlinuz-$kver"
mkdir -p "$tmp/tree/lib/modules"
mv "$tmp/x/boot/vmlinuz-$kver" "$tmp/tree/vmlinuz"
mv "$tmp/x/boot/config-$kver" "$tmp/tree/config"
mv "$tmp/x/lib/modules/$kver" "$tmp/tree/lib/modules/$kver"
# the .deb ships no modules.dep
depmod -b "$tmp/tree" "$kver" || die "depmod failed on the $kver modules"
echo "$kver" > "$tmp/tree/version"
echo "$image" > "$tmp/tree/package"
echo "$label" > "$tmp/tree/label"
touch "$tmp/tree/ready"
rm -rf "$dir"
mv "$tmp/tree" "$dir"
echo "$dir"
