// SPDX-License-Identifier: GPL-2.0-only
/* ackhold's verdict, peer by peer, with the fix each one's evidence supports. */
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "common.h"
#include "fixtext.h"

#include "ackhold/rules.h"
#include "ackhold/verdict.h"

struct text {
	char *buf;
	size_t cap, len;
};

static void add(struct text *t, const char *fmt, ...) TK_PRINTF(2, 3);
static void add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->len >= t->cap)
		return;
	va_start(ap, fmt);
	n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
	va_end(ap);
	t->len = n < 0 ? t->cap : t->len + (size_t)n;
}

/* the fix for one peer: Nagle's when most of its holds had Nagle's
 * signature, else quick ACKs: every hold counted here was a delayed ACK
 * (rules.h), and quick ACKs end Nagle's holds too */
static void peer_fix(struct text *t, const struct ah_peer *p)
{
	char peer[64], host[64], fix[BT_FIX_STR];

	ah_addr_text(p->addr, p->family, peer, sizeof(peer));
	ah_addr_text(p->laddr, p->family, host, sizeof(host));
	if (p->nagle && 2 * p->nagle >= p->timer_holds + p->app_holds)
		bt_fix_nagle(fix, sizeof(fix), peer, host, p->port, true);
	else
		bt_fix_delack(fix, sizeof(fix), host, peer, p->port);
	add(t, " Fix: %s.", fix);
}

static void peer_clause(struct text *t, const struct ah_peer *p)
{
	char peer[64];

	add(t, " %s (to port %u): this host delayed %" PRIu64 " of its ACKs (%" PRIu64 " sent by the "
	       "delayed-ACK timer, %" PRIu64 " by its application's read or answer)",
	    ah_addr_text(p->addr, p->family, peer, sizeof(peer)), p->port, p->timer_holds + p->app_holds,
	    p->timer_holds, p->app_holds);
	add(t, ", holding its data %.1f ms in all (%.1f%% of its stream's time), up to %.1f ms; its sender "
	       "was waiting on %" PRIu64 " of them (silent until the ACK, its data within %d RTTs after)",
	    (double)p->held_ns * TK_MSEC_PER_NSEC_F, ah_peer_held_share(p) * 100.0,
	    (double)p->max_hold_ns * TK_MSEC_PER_NSEC_F, p->waits, AH_WAIT_RTTS);
	if (p->nagle)
		add(t, ", %" PRIu64 " with Nagle's signature (a short segment, then silence until the ACK)", p->nagle);
	add(t, ".");
	peer_fix(t, p);
}

static void blind_spots(struct text *t, const uint64_t cnt[AH_CNT_ALL])
{
	if (cnt[AH_CNT_LOST])
		add(t, "%" PRIu64 " %s lost (the ring buffer was full): the figures below miss %s. ", cnt[AH_CNT_LOST],
		    tk_plural(cnt[AH_CNT_LOST], "record was", "records were"), tk_plural(cnt[AH_CNT_LOST], "it", "them"));
	if (cnt[AH_CNT_SKIPPED])
		add(t, "%" PRIu64 " %s of ackhold's programs %s skipped by the kernel (one already ran on that CPU): "
		       "the figures below may miss what %s would have seen. ", cnt[AH_CNT_SKIPPED],
		    tk_plural(cnt[AH_CNT_SKIPPED], "run", "runs"), tk_plural(cnt[AH_CNT_SKIPPED], "was", "were"),
		    tk_plural(cnt[AH_CNT_SKIPPED], "it", "they"));
	if (cnt[AH_CNT_UNSEEN])
		add(t, "%" PRIu64 " %s unseen (the tracepoints did not show the ACK that ended %s, or a segment "
		       "with it): %s counted, not judged. ", cnt[AH_CNT_UNSEEN],
		    tk_plural(cnt[AH_CNT_UNSEEN], "hold ended", "holds ended"), tk_plural(cnt[AH_CNT_UNSEEN], "it", "each"),
		    tk_plural(cnt[AH_CNT_UNSEEN], "it is", "each is"));
	if (cnt[AH_CNT_UNTRACKED])
		add(t, "%" PRIu64 " %s on flows not tracked (--max-flows was reached): those flows are not "
		       "judged. ", cnt[AH_CNT_UNTRACKED], tk_plural(cnt[AH_CNT_UNTRACKED], "segment came", "segments came"));
}

/* the holds this host's ACK policy did not make, over all peers: those
 * the sender's own data ended, and a loss's */
static void data_clause(struct text *t, struct ah_peer *const *ranked, size_t n)
{
	uint64_t holds = 0, repairs = 0, late = 0;

	for (size_t i = 0; i < n; i++) {
		holds += ranked[i]->data_holds;
		repairs += ranked[i]->repair_holds;
		late += ranked[i]->late_holds;
	}
	if (holds)
		add(t, " %" PRIu64 " more %s with the sender's next data (the kernel waiting for a second segment "
		       "while the sender sent it): %s nothing back.", holds, tk_plural(holds, "hold ended", "holds ended"),
		    tk_plural(holds, "it held", "they held"));
	if (repairs)
		add(t, " %" PRIu64 " %s for a lost segment's repair: the loss held %s, not this host.", repairs,
		    tk_plural(repairs, "hold waited", "holds waited"), tk_plural(repairs, "it", "them"));
	if (late)
		add(t, " %" PRIu64 " %s late with no delayed ACK scheduled: this host's CPU, or a receive window "
		       "its application had not opened, held %s, which no quickack setting changes.", late,
		    tk_plural(late, "ACK left", "ACKs left"), tk_plural(late, "it", "them"));
}

void ah_verdict(char *buf, size_t cap, struct ah_peer *const *ranked, size_t n, uint32_t top,
		double min_hold_ms, const uint64_t cnt[AH_CNT_ALL])
{
	struct text t = { buf, cap, 0 };
	uint64_t rest_holds = 0, rest_ns = 0;
	size_t held = 0, named = 0;

	buf[0] = '\0';
	blind_spots(&t, cnt);
	if (!n) {
		add(&t, "No stream's data arrived on the ports traced.");
		return;
	}
	for (size_t i = 0; i < n; i++)
		held += ranked[i]->held_ns > 0;
	if (!held)
		add(&t, "This host held back none of its %zu peer(s): it delayed no ACK of their data %g ms or "
			"more, and its delayed-ACK timer sent none.", n, min_hold_ms);
	else
		add(&t, "This host held back %zu of its %zu peer(s).", held, n);
	for (size_t i = 0; i < n && ranked[i]->held_ns; i++) {
		if (named < top) {
			peer_clause(&t, ranked[i]);
			named++;
			continue;
		}
		rest_holds += ranked[i]->timer_holds + ranked[i]->app_holds;
		rest_ns += ranked[i]->held_ns;
	}
	if (held > named)
		add(&t, " %zu more peer(s): %" PRIu64 " %s, %.1f ms in all (--top names more).", held - named,
		    rest_holds, tk_plural(rest_holds, "hold", "holds"), (double)rest_ns * TK_MSEC_PER_NSEC_F);
	data_clause(&t, ranked, n);
}
