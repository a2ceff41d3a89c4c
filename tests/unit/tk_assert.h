/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Comparisons that print both sides when they fail: cmocka's assert_true
 * shows only the expression, and its assert_float_equal rounds to float.
 * Include after <cmocka.h>.
 *
 *   tk_assert_cmp(a, <=, b)    a OP b, both compared as long double, which
 *                              holds every 64-bit integer exactly
 *   tk_assert_near(a, b, eps)  |a - b| <= eps, as doubles
 */
#ifndef TK_ASSERT_H
#define TK_ASSERT_H

#include <math.h>

#define tk_assert_cmp(a, op, b)                                                                   \
	do {                                                                                      \
		long double tk_a_ = (a), tk_b_ = (b);                                             \
		if (!(tk_a_ op tk_b_)) {                                                          \
			print_error("%s %s %s: %.21Lg %s %.21Lg is false\n", #a, #op, #b, tk_a_, #op, \
				    tk_b_);                                                       \
			_fail(__FILE__, __LINE__);                                                \
		}                                                                                 \
	} while (0)

#define tk_assert_near(a, b, eps)                                                                 \
	do {                                                                                      \
		double tk_a_ = (a), tk_b_ = (b), tk_e_ = (eps);                                   \
		if (!(fabs(tk_a_ - tk_b_) <= tk_e_)) {                                            \
			print_error("%s = %.17g, %s = %.17g: more than %g apart\n", #a, tk_a_, #b,  \
				    tk_b_, tk_e_);                                                \
			_fail(__FILE__, __LINE__);                                                \
		}                                                                                 \
	} while (0)

#endif
