/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * bbrtrace's --help text: the backends before the options, the sample's
 * fields after them, and the detector's rules, printed from bbrtrace/rules.h.
 */
#ifndef BBRTRACE_HELP_H
#define BBRTRACE_HELP_H

#include <stdio.h>

extern const char bt_help_synopsis[];
extern const char bt_help_footer[];
/* the detector's rules, with its thresholds from bbrtrace/rules.h */
void bt_help_detect(FILE *f);

#endif
