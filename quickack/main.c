// SPDX-License-Identifier: GPL-2.0-only
/*
 * quickack: turn quick ACKs (RTAX_QUICKACK) and the related delayed-ACK
 * knobs on or off for existing routes (or a host route made for one peer),
 * keeping everything else about each route, with a journal that undoes the
 * change exactly.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "netns.h"
#include "output.h"
#include "run.h"
#include "scope.h"

static int enter_netns(const struct qa_args *a)
{
	char msg[512];
	int e;

	if (!a->netns || !(e = netns_enter(a->netns, msg, sizeof(msg))))
		return 0;
	elog("--netns: %s", msg);
	if (e == -ENOENT)
		return TK_EXIT_NONETNS;
	return e == -EPERM || e == -EACCES ? TK_EXIT_NOPERM : TK_EXIT_FAIL;
}

/* the journal's path, how messages name the namespace, the -o file, the namespace entered */
static int setup(struct ctx *c, struct qa_args *a)
{
	memset(c, 0, sizeof(*c));
	c->a = a;
	c->out_file = stdout;
	c->ns_tag = a->netns ? a->netns : QAJ_NETNS_SELF;
	if (a->netns)
		snprintf(c->ns_desc, sizeof(c->ns_desc), "network namespace '%s'", a->netns);
	else
		snprintf(c->ns_desc, sizeof(c->ns_desc), "this network namespace");
	if (a->journal)
		snprintf(c->journal_path, sizeof(c->journal_path), "%s", a->journal);
	else
		qaj_default_path(a->netns, c->journal_path, sizeof(c->journal_path));
	if (a->output && !(c->out_file = fopen(a->output, "w"))) {
		elog("cannot write %s: %s", a->output, strerror(errno));
		return TK_EXIT_FAIL;
	}
	return enter_netns(a);
}

/* is congestion control `cc` registered in this kernel? (cannot tell: yes) */
static bool cc_registered(const char *cc)
{
	char buf[1024] = "", *tok, *save = NULL;
	FILE *f = fopen("/proc/sys/net/ipv4/tcp_available_congestion_control", "r");

	if (!f)
		return true;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	for (tok = strtok_r(buf, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
		if (!strcmp(tok, cc))
			return true;
	return false;
}

/* a route naming a congestion control the kernel lacks (a BPF one, such as
 * bbrtrace's bbr_traced, gone with its program): say so, and how to undo it */
static void flag_missing_congctl(const struct ctx *c, const struct qa_route *r)
{
	char dst[64], t[32];

	if (!r->cc[0] || cc_registered(r->cc))
		return;
	qa_prefix_str(r->family, r->dst, r->rtm.rtm_dst_len, dst, sizeof(dst));
	wlog("the route %s (table %s) names congctl %s, which this kernel does not have (a BPF "
	     "congestion control that is gone?): new connections on it fail; undo: quickack congctl "
	     "%s off%s%s",
	     dst, qa_table_str(r->table, t, sizeof(t)), r->cc, dst, c->a->netns ? " --netns " : "",
	     c->a->netns ? c->a->netns : "");
}

/* show: the matching routes as records */
static int cmd_show(struct ctx *c)
{
	struct qa_filter f;
	int rc;

	if ((rc = qa_open_nl(c, false)) || (rc = qa_resolve_selection(c)) || (rc = qa_dump(c, &c->routes)) ||
	    (rc = qa_check_table(c)))
		return rc;
	qa_filter_init(c, &f);
	for (size_t i = 0; i < c->routes.n; i++) {
		if (!qa_filter_match(&f, &c->routes.v[i]))
			continue;
		flag_missing_congctl(c, &c->routes.v[i]);
		qa_out_route(qa_writer(c), &c->nl, &c->routes.v[i]);
	}
	return qa_finish_output(c, 0);
}

static int run(struct ctx *c)
{
	switch (c->a->cmd) {
	case QA_SHOW: return cmd_show(c);
	case QA_RESTORE: return qa_cmd_restore(c, false);
	case QA_STATUS: return qa_cmd_restore(c, true);
	case QA_NODELAY: return qa_cmd_scope(c);
	default: return c->a->scope ? qa_cmd_scope(c) : qa_cmd_change(c);
	}
}

/* rc, or TK_EXIT_FAIL when the -o file could not be written */
static int teardown(struct ctx *c, int rc)
{
	qa_routes_free(&c->routes);
	if (c->nl_open)
		qa_nl_close(&c->nl);
	if (c->out_file && c->out_file != stdout && fclose(c->out_file) && !rc) {
		elog("writing %s failed: %s", c->a->output, strerror(errno));
		rc = TK_EXIT_FAIL;
	}
	return rc;
}

int main(int argc, char **argv)
{
	struct qa_args a;
	struct ctx c;
	int rc;

	log_init(argv[0]);
	qa_args_parse(argc, argv, &a);
	rc = setup(&c, &a);
	if (!rc)
		rc = run(&c);
	return teardown(&c, rc);
}
