// SPDX-License-Identifier: GPL-2.0-only
/*
 * The values upfbench's options take: counts with a k/M/G suffix, and
 * comma-separated lists of them or of names, each item parsed in turn.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common.h"
#include "log.h"

#include "args.h"
#include "args_cli.h"

#define COUNT_SYNTAX "is not a count (an integer, optionally with k, M or G: 2.2M)"

/* an integer count, optionally with a k/M/G suffix: "10k", "2.2M" */
int up_parse_count(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	double mult = 1, v;
	size_t n = s ? strlen(s) : 0;
	char num[64], *end;

	if (!n || n >= sizeof(num) || s[0] == '-' || s[0] == '+' || s[0] == ' ') {
		elog("%s: '%s' " COUNT_SYNTAX, opt, s ? s : "");
		return -1;
	}
	memcpy(num, s, n + 1);
	switch (num[n - 1]) {
	case 'k': case 'K': mult = TK_KILO_F; num[--n] = '\0'; break;
	case 'M': mult = TK_MEGA_F; num[--n] = '\0'; break;
	case 'G': mult = TK_GIGA_F; num[--n] = '\0'; break;
	}
	if (mult == 1) {
		if (strspn(s, "0123456789") != n) {
			elog("%s: '%s' " COUNT_SYNTAX, opt, s);
			return -1;
		}
		return cli_parse_u64(opt, s, min, max, out);
	}
	errno = 0;
	v = strtod(num, &end);
	if (!n || *end || errno || !isfinite(v) || !strchr("0123456789.", num[0])) {
		elog("%s: '%s' " COUNT_SYNTAX, opt, s);
		return -1;
	}
	v *= mult;
	if (fabs(v - nearbyint(v)) > 1e-6 * (v > 1 ? v : 1)) {
		elog("%s: '%s' is not a whole number", opt, s);
		return -1;
	}
	if (v < (double)min || v > (double)max) {
		elog("%s: %s is out of range %llu..%llu", opt, s, (unsigned long long)min,
		     (unsigned long long)max);
		return -1;
	}
	*out = (uint64_t)nearbyint(v);
	return 0;
}

/* split a comma-separated list in place; returns the count or -1 */
static int split_list(const char *opt, char *s, char **items, unsigned int max)
{
	unsigned int n = 0;
	char *save = NULL, *tok;

	if (!*s || s[strlen(s) - 1] == ',' || s[0] == ',' || strstr(s, ",,")) {
		elog("%s: '%s' is not a comma-separated list", opt, s);
		return -1;
	}
	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == max) {
			elog("%s: more than %u values", opt, max);
			return -1;
		}
		items[n++] = tok;
	}
	return (int)n;
}

int up_item_choice(const char *opt, const char *item, const void *choices, uint64_t *out)
{
	int k;

	if (cli_parse_choice(opt, item, choices, &k))
		return -1;
	*out = (uint64_t)k;
	return 0;
}

int up_item_batch(const char *opt, const char *item, const void *ctx, uint64_t *out)
{
	(void)ctx;
	return cli_parse_u64(opt, item, 1, UP_MAX_BATCH, out);
}

int up_item_sessions(const char *opt, const char *item, const void *ctx, uint64_t *out)
{
	(void)ctx;
	return up_parse_count(opt, item, 1, UP_MAX_SESSIONS, out);
}

/* a preset's index in up_presets */
int up_item_preset(const char *opt, const char *item, const void *ctx, uint64_t *out)
{
	char names[256] = "";

	(void)ctx;
	for (unsigned int i = 0; i < up_npresets; i++) {
		if (!strcmp(up_presets[i].name, item)) {
			*out = i;
			return 0;
		}
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? "|" : "",
			 up_presets[i].name);
	}
	elog("%s: '%s' is not one of %s", opt, item, names);
	return -1;
}

/* the option's value: a comma-separated list where the command takes one, else one value */
int up_parse_values(const char *opt, const char *val, bool list, up_item_fn fn, const void *ctx,
		    struct up_list *l)
{
	char *items[UP_MAX_LIST], *copy;
	int n, rc = 0;

	if (!list) {
		l->n = 1;
		return fn(opt, val, ctx, &l->v[0]);
	}
	copy = strdup(val);
	if (!copy) {
		elog("%s: out of memory", opt);
		return -1;
	}
	n = split_list(opt, copy, items, UP_MAX_LIST);
	for (int i = 0; i < n && !rc; i++)
		rc = fn(opt, items[i], ctx, &l->v[i]);
	free(copy);
	if (n < 0 || rc)
		return -1;
	l->n = (unsigned int)n;
	return 0;
}
