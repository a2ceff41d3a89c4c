# repro/: the live-stream push reproduction (pushsim, topology and scripts).
TOOLS += pushsim
pushsim_SRCS := repro/pushsim.c
