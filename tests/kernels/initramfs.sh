#!/usr/bin/env bash
# Build the kernel matrix's initramfs for one unpacked kernel tree (from
# fetch.sh): static busybox, the /init next to this script, and the modules
# that mount the host's / over 9p with an overlay (9p, 9pnet_virtio,
# virtio_pci, overlay and what they depend on, decompressed).
#
#   tests/kernels/initramfs.sh DIR     prints the image's path
#
# The image is cached in DIR, named by a hash of its inputs, so it is rebuilt
# only when /init or the module list changes.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:?usage: initramfs.sh DIR}
kver=$(cat "$dir/version")
mods=(9p 9pnet_virtio overlay virtio_pci)
die() { echo "initramfs.sh: $*" >&2; exit 4; }

busybox=/bin/busybox
[ "$(dpkg-query -W -f='${db:Status-Status}' busybox-static 2>/dev/null)" = installed ] && [ -x $busybox ] ||
	die "a static busybox is missing (Debian package busybox-static; run ./scripts/install-deps.sh)"

hash=$(cat "$here/init" <(printf '%s\n' "${mods[@]}") | sha256sum | cut -c1-12)
img=$dir/initramfs-$hash.img
if [ -s "$img" ]; then
	echo "$img"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"/{bin,dev,proc,sys,mods,lower,upper,newroot}
cp "$busybox" "$tmp/bin/busybox"
cp "$here/init" "$tmp/init"
chmod 755 "$tmp/init"
: > "$tmp/mods/order"
# insmod order from modules.dep; built-in modules need nothing
modprobe -d "$dir" -S "$kver" --show-depends -a "${mods[@]}" | awk '$1 == "insmod" {print $2}' |
	awk '!seen[$0]++' | while read -r ko; do
	name=$(basename "$ko")
	case $name in
	*.xz) xz -dc "$ko" > "$tmp/mods/${name%.xz}"; name=${name%.xz} ;;
	*.zst) zstd -qdc "$ko" > "$tmp/mods/${name%.zst}"; name=${name%.zst} ;;
	*) cp "$ko" "$tmp/mods/$name" ;;
	esac
	echo "$name" >> "$tmp/mods/order"
done
[ -s "$tmp/mods/order" ] || die "no modules resolved for $kver (is $dir/lib/modules/$kver/modules.dep there?)"
# a name of its own until the rename: two guests of one kernel may boot at once
(cd "$tmp" && find . | "$busybox" cpio -o -H newc 2>/dev/null | gzip -1) > "$img.$$.tmp"
mv "$img.$$.tmp" "$img"
echo "$img"
