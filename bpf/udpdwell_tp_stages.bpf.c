// SPDX-License-Identifier: GPL-2.0-only
/*
 * udpdwell's tracepoint backend with the stage knob (targ_stop_at, enum
 * ud_stage), for the cost breakdown of bench/60-udpdwell.sh only: loaded by
 * bench/udpdwell_stages, never by udpdwell.
 */
#define UD_STAGES 1
#include "udpdwell_tp.bpf.c"
