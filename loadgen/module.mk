# loadgen/: the load generators. pushsim, a live-stream push over TCP (both
# ends; repro/'s scenarios run it), and the media-server demo's two helpers
# (repro/sfu.sh): rtpsend (an RTP-like sender at a set packet rate) and
# sfu_echo (a UDP echo "SFU" that measures its own jitter, loss and
# per-datagram wait).
TOOLS += pushsim rtpsend sfu_echo

pushsim_SRCS  := loadgen/pushsim.c loadgen/pushsim_cli.c loadgen/pushsim_records.c \
                 loadgen/pushsim_send.c loadgen/pushsim_recv.c loadgen/lathist.c
rtpsend_SRCS  := loadgen/rtpsend.c loadgen/rtp.c
sfu_echo_SRCS := loadgen/sfu_echo.c loadgen/rtp.c

# the demo's datagram and the receiver's RFC 3550 figures
UNIT_TESTS += test_rtp
test_rtp_SRCS := loadgen/rtp.c

# the receiver's frame-latency histogram and its quantiles
UNIT_TESTS += test_lathist
test_lathist_SRCS := loadgen/lathist.c
