// SPDX-License-Identifier: GPL-2.0-only
/* bbr_traced for kernels before 6.10, where bbr_main(sk, rs) takes two arguments. */
#define BT_BBR_MAIN_2ARGS 1
#include "bbr_traced.bpf.c"
