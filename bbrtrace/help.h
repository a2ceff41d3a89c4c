/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * bbrtrace's help texts: --help, what a user types, and --help-detect, the
 * records' fields and the detector's method, printed from bbrtrace/rules.h.
 */
#ifndef BBRTRACE_HELP_H
#define BBRTRACE_HELP_H

#include <stdio.h>

extern const char bt_help_synopsis[];
extern const char bt_help_footer[];
/* --help-detect: the records' fields and the detector's rules, with its
 * thresholds from bbrtrace/rules.h */
void bt_help_detect(FILE *f);

#endif
