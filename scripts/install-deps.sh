#!/usr/bin/env bash
# Install the Debian 12 packages this project needs, and only those that are missing.
# Idempotent: a second run finds nothing to do and changes nothing.
set -euo pipefail

PKGS=(
  # build
  make gcc clang llvm pkg-config libbpf-dev bpftool libelf-dev zlib1g-dev
  libpcap-dev libnl-3-dev libnl-route-3-dev libcmocka-dev libclang-rt-14-dev
  libdpdk-dev
  # arm64's uapi asm headers, for the arm64 compile check of bpf/ (make bpf-arm64)
  linux-libc-dev-arm64-cross
  # run and test
  iproute2 iperf3 tcpdump tshark tcptrace gnuplot-nox bats jq procps
  # ethtool: GRO on a veth (repro/dip.sh --gro on)
  ethtool
  # mergecap, editcap, capinfos: bbrpcap's tests over several capture files
  wireshark-common
  python3-scapy python3-yaml prometheus afl++ valgrind curl file
  # strace: fault injection (quickack killed between its journal and a change)
  strace
  # the real pushes: ffmpeg (libx264) into nginx-rtmp (tests/bats/rtmp.bats, repro/dip.sh --push ffmpeg)
  ffmpeg nginx-light libnginx-mod-rtmp
  # make install's man pages and bash completions, and their tests
  groff-base man-db bash-completion
  # the kernel matrix: Debian's kernels booted under QEMU (tests/kernels/)
  qemu-system-x86 busybox-static kmod xz-utils
)

missing=()
for p in "${PKGS[@]}"; do
  st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [ "$st" = installed ] || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PKGS[@]} packages present"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages: ${missing[*]}" >&2
  echo "install-deps: run as root (or: sudo $0) to install them" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# wireshark-common asks whether non-root users may capture; answer no, silently
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
