// SPDX-License-Identifier: GPL-2.0-only
/*
 * The verdict in words and as a record: the whole trace's or the rolling
 * window's collapses, throttles and stalls in sentences, a fix only past the
 * floors of bbrtrace/rules.h, and the same figures in the verdict record.
 */
#include <stdio.h>
#include <string.h>

#include "fixtext.h"
#include "bbrtrace/peerverdict.h"
#include "bbrtrace/rules.h"
#include "bbrtrace/verdict.h"
#include "bbrtrace/vtext.h"
#include "cli.h"
#include "common.h"

static uint64_t sum_causes(const uint64_t v[BT_NCAUSES])
{
	uint64_t n = 0;

	for (int i = 0; i < BT_NCAUSES; i++)
		n += v[i];
	return n;
}


/* a flow's sender and receiver addresses, as a fix names them */
static void fmt_ends(const struct bt_flow_ends *e, char snd[BT_ADDR_STR], char rcv[BT_ADDR_STR])
{
	cli_fmt_v6mapped(e->saddr, snd, BT_ADDR_STR);
	cli_fmt_v6mapped(e->daddr, rcv, BT_ADDR_STR);
}

/* the sender's stalls, all causes: how many and how long */
static void sum_stalls(const struct bt_detect_stats *st, uint64_t *n, uint64_t *ns)
{
	*n = *ns = 0;
	for (int i = 0; i < BT_NSTALL_CAUSES; i++) {
		*n += st->stalls[i];
		*ns += st->stalled_ns[i];
	}
}

/* what the throttling collapses' pacing fell under: an app-limited stream
 * needs BT_THROTTLE_HEADROOM x its demand; a flow with more to send, what it
 * delivered, and all of it when its path gave less (bbrtrace/rules.h) */
static void need_words(struct bt_verdict *v, uint64_t throttling)
{
	uint64_t app = v->st.throttling_app;

	if (app == throttling)
		vt_cat(v->text, sizeof(v->text), "%.2f x its demand", BT_THROTTLE_HEADROOM);
	else if (!app)
		vt_cat(v->text, sizeof(v->text), "what the flow delivered, or its path gave less");
	else
		vt_cat(v->text, sizeof(v->text),
		    "what it needed: %.2f x the demand of a stream with nothing more to send; what "
		    "a flow with more delivered, or its path gave less",
		    BT_THROTTLE_HEADROOM);
}

/* "The bandwidth estimate collapsed N times in S s", and whether that throttled the stream */
static void headline(struct bt_verdict *v, uint64_t throttling)
{
	const struct bt_detect_stats *st = &v->st;
	char late[32], held[32];

	snprintf(v->text, sizeof(v->text), "The bandwidth estimate collapsed %llu %s in %.0f s",
		 (unsigned long long)v->collapses, tk_plural(v->collapses, "time", "times"), v->elapsed_s);
	if (!throttling) {
		vt_cat(v->text, sizeof(v->text),
		    " and never throttled the stream: the pacing BBR allowed stayed above what it "
		    "needed. No action is needed%s",
		    v->stalls ? " for the collapses" : "");
		return;
	}
	vt_bytes(late, sizeof(late), st->late_bytes);
	vt_us(held, sizeof(held), st->throttled_ns / TK_NSEC_PER_USEC);
	vt_cat(v->text, sizeof(v->text),
	    "; %llu of them throttled the stream (the pacing BBR allowed fell under ",
	    (unsigned long long)throttling);
	need_words(v, throttling);
	vt_cat(v->text, sizeof(v->text), ") for %s in all, holding back %s", held, late);
}

/* the throttling collapses of one cause, n of them, with their evidence */
typedef void cause_clause_fn(struct bt_verdict *v, uint64_t n);

static void delayed_ack_clause(struct bt_verdict *v, uint64_t n)
{
	const struct bt_detect_stats *st = &v->st;
	double app_share = st->samples ? (double)st->app_limited_samples / (double)st->samples : 0;
	char a[32], b[32];

	vt_us(a, sizeof(a), st->delack_thr.rcv_interval_us);
	vt_us(b, sizeof(b), st->delack_thr.snd_interval_us);
	vt_cat(v->text, sizeof(v->text),
	    "; %llu %s caused by delayed ACKs (rcv_interval ≈ %s against snd_interval ≈ %s%s)",
	    (unsigned long long)n, tk_plural(n, "was", "were"), a, b,
	    app_share >= 0.5 ? ", while the stream was app-limited" : "");
}

static void rate_drop_clause(struct bt_verdict *v, uint64_t n)
{
	char a[32], b[32];

	/* from what the flow delivered, not BBR's old maximum: that may be a burst
	 * the path never sustained */
	vt_bps(a, sizeof(a), v->st.rate_thr.delivered_bps);
	vt_bps(b, sizeof(b), v->st.rate_thr.bw_bps);
	vt_cat(v->text, sizeof(v->text),
	    "; %llu %s real rate %s: the path delivered less (≈ %s, what the flow had "
	    "delivered, to %s)",
	    (unsigned long long)n, tk_plural(n, "was a", "were"), tk_plural(n, "drop", "drops"), a, b);
}

static void loss_policer_clause(struct bt_verdict *v, uint64_t n)
{
	char a[32];

	vt_bps(a, sizeof(a), v->st.lt_bw_last_bps);
	vt_cat(v->text, sizeof(v->text),
	    "; %llu %s BBR switching to its long-term rate (%s) after sustained losses, as "
	    "behind a traffic policer",
	    (unsigned long long)n, tk_plural(n, "was", "were"), a);
}

/* the causes with a clause of their own; the others share one (throttling_rest) */
static cause_clause_fn *const cause_clauses[BT_NCAUSES] = {
	[BT_CAUSE_DELAYED_ACK] = delayed_ack_clause,
	[BT_CAUSE_RATE_DROP] = rate_drop_clause,
	[BT_CAUSE_LOSS_POLICER] = loss_policer_clause,
};

/* the causes without a clause of their own, in one: "2 had other causes (1 other, 1 lone
 * late segment: see each record's evidence)" */
static void throttling_rest(struct bt_verdict *v)
{
	const struct bt_detect_stats *st = &v->st;
	uint64_t n = 0;
	const char *sep = "";

	for (int i = 0; i < BT_NCAUSES; i++)
		n += cause_clauses[i] ? 0 : st->throttling[i];
	if (!n)
		return;
	vt_cat(v->text, sizeof(v->text), "; %llu had %s (", (unsigned long long)n,
	    tk_plural(n, "another cause", "other causes"));
	for (int i = 0; i < BT_NCAUSES; i++) {
		if (cause_clauses[i] || !st->throttling[i])
			continue;
		vt_cat(v->text, sizeof(v->text), "%s%llu %s", sep, (unsigned long long)st->throttling[i],
		    bt_cause_labels[i]);
		sep = ", ";
	}
	vt_cat(v->text, sizeof(v->text), "%s", ": see each record's evidence)");
}

/* the throttling collapses, cause by cause, with their evidence */
static void throttling_clauses(struct bt_verdict *v)
{
	for (int i = 0; i < BT_NCAUSES; i++)
		if (cause_clauses[i] && v->st.throttling[i])
			cause_clauses[i](v, v->st.throttling[i]);
	throttling_rest(v);
}

/* the harmless collapses in one clause: how many, of which causes */
static void harmless_clause(struct bt_verdict *v, uint64_t throttling)
{
	const struct bt_detect_stats *st = &v->st;
	const char *sep = "";

	if (v->collapses == throttling)
		return;
	if (throttling)
		vt_cat(v->text, sizeof(v->text), "; %llu more %s harmless (",
		    (unsigned long long)(v->collapses - throttling),
		    tk_plural(v->collapses - throttling, "was", "were"));
	else
		vt_cat(v->text, sizeof(v->text), " (all harmless: ");
	for (int i = 0; i < BT_NCAUSES; i++) {
		uint64_t h = st->collapses[i] - st->throttling[i];

		if (h) {
			vt_cat(v->text, sizeof(v->text), "%s%llu %s", sep, (unsigned long long)h, bt_cause_labels[i]);
			sep = ", ";
		}
	}
	vt_cat(v->text, sizeof(v->text), ")%s",
	    throttling ? ": the pacing stayed above what the stream needed" : "");
}

bool bt_throttle_negligible(const struct bt_detect_stats *st)
{
	return !st->throttles_open && st->late_bytes < BT_FIX_MIN_LATE_BYTES &&
	       st->throttled_ns < BT_FIX_MIN_THROTTLED_MS * TK_NSEC_PER_MSEC &&
	       st->throttling[BT_CAUSE_DELAYED_ACK] < BT_FIX_DELACK_RECURS;
}

/* what to do: for the throttling collapses only, when they cost enough */
static void fix_of(struct bt_verdict *v, uint64_t throttling)
{
	const struct bt_detect_stats *st = &v->st;
	uint64_t dack = st->throttling[BT_CAUSE_DELAYED_ACK], rate = st->throttling[BT_CAUSE_RATE_DROP];
	uint64_t pol = st->throttling[BT_CAUSE_LOSS_POLICER];
	char snd[BT_ADDR_STR], rcv[BT_ADDR_STR];

	if (!throttling || v->peers.harmed >= 2) /* several peers: each gets its own fix */
		return;
	if (bt_throttle_negligible(st)) {
		vt_cat(v->text, sizeof(v->text),
		    " That is too little to act on (under %u ms and %u kB in all): no action is "
		    "needed%s.",
		    BT_FIX_MIN_THROTTLED_MS, (unsigned)(BT_FIX_MIN_LATE_BYTES / TK_BYTES_PER_KB),
		    v->stalls ? " for the collapses" : "");
		return;
	}
	if (dack) {
		fmt_ends(&st->delack_ends, snd, rcv);
		bt_fix_delack(v->fix, sizeof(v->fix), rcv, snd, st->delack_ends.dport);
		vt_cat(v->text, sizeof(v->text), " Fix: %s.", v->fix);
	} else if (pol && pol * 2 >= throttling) {
		bt_fix_policer(v->fix, sizeof(v->fix), NULL);
		vt_cat(v->text, sizeof(v->text), " Fix: %s.", v->fix);
	} else if (rate && rate * 2 >= throttling) {
		vt_cat(v->text, sizeof(v->text), " No receiver setting helps: the path's capacity fell.");
	} else {
		vt_cat(v->text, sizeof(v->text),
		    " No fix is proposed: neither delayed ACKs, a policer nor a rate drop caused most "
		    "of the throttling (see each throttling collapse's evidence).");
	}
}

/* the sender's stalls, in a sentence of their own: how many, how long, why, the fix */
static void stall_sentence(struct bt_verdict *v)
{
	const struct bt_detect_stats *st = &v->st;
	uint64_t n = v->stalls, nagle = st->stalls[BT_STALL_NAGLE];
	const char *sep = "";
	char held[32], snd[BT_ADDR_STR], rcv[BT_ADDR_STR];

	if (!n)
		return;
	vt_us(held, sizeof(held), v->stalled_ns / TK_NSEC_PER_USEC);
	vt_cat(v->text, sizeof(v->text), " The sender stalled %llu %s with data waiting (%u ms or more "
	    "each, %s in all): ", (unsigned long long)n, tk_plural(n, "time", "times"),
	    (unsigned)(BT_STALL_MIN_US / TK_USEC_PER_MSEC), held);
	for (int i = 0; i < BT_NSTALL_CAUSES; i++) {
		if (!st->stalls[i])
			continue;
		vt_cat(v->text, sizeof(v->text), "%s%llu %s", sep, (unsigned long long)st->stalls[i],
		    bt_stall_cause_names[i]);
		if (i == BT_STALL_NAGLE)
			vt_cat(v->text, sizeof(v->text),
			    " (ended by the receiver's late ACK %llu, by the application's next write "
			    "%llu, by neither seen %llu)",
			    (unsigned long long)st->nagle_ended[BT_STALL_END_ACK],
			    (unsigned long long)st->nagle_ended[BT_STALL_END_WRITE],
			    (unsigned long long)st->nagle_ended[BT_STALL_END_UNSEEN]);
		sep = ", ";
	}
	vt_cat(v->text, sizeof(v->text), ".");
	if (nagle * 2 < n || v->peers.harmed >= 2)
		return;
	if (v->stalled_ns < BT_STALL_FIX_MIN_MS * TK_NSEC_PER_MSEC) {
		vt_cat(v->text, sizeof(v->text), " That is too little to act on (under %u ms in all): no "
		    "action is needed for the stalls.", BT_STALL_FIX_MIN_MS);
		return;
	}
	fmt_ends(&st->nagle_ends, snd, rcv);
	bt_fix_nagle(v->stall_fix, sizeof(v->stall_fix), snd, rcv, st->nagle_ends.dport,
		     bt_nagle_ack_ended(st->nagle_ended));
	vt_cat(v->text, sizeof(v->text), " Nagle's algorithm held each frame's tail until the data in "
	    "flight was ACKed. Fix: %s.", v->stall_fix);
}

/*
 * With two peers or more that need a fix, the peers one by one, worst first,
 * each with its fix (bbrtrace/peerverdict.h); the record's fix and stall_fix
 * are the worst peer's. And the flows that could not be tracked, unjudged.
 */
static void peers_sentence(struct bt_verdict *v)
{
	const struct bt_peer_verdict *pv = &v->peers;

	if (pv->harmed >= 2) {
		vt_cat(v->text, sizeof(v->text), " %s", pv->text);
		for (unsigned int i = 0; i < pv->ntop && !v->fix[0]; i++)
			if (pv->top[i].h.throttling[BT_CAUSE_DELAYED_ACK])
				snprintf(v->fix, sizeof(v->fix), "%s", pv->top[i].fix);
		for (unsigned int i = 0; i < pv->ntop && !v->stall_fix[0]; i++)
			if (!strncmp(pv->top[i].fix, "TCP_NODELAY", 11))
				snprintf(v->stall_fix, sizeof(v->stall_fix), "%s", pv->top[i].fix);
	}
	if (v->st.samples_untracked)
		vt_cat(v->text, sizeof(v->text),
		       " %llu samples came from flows that could not be tracked (%s): they were not judged.",
		       (unsigned long long)v->st.samples_untracked,
		       v->st.untracked_at_cap ? "more flows open than --max-flows" : "out of memory");
}

void bt_verdict_build(struct bt_verdict *v, const struct bt_detect *d, double collapse_ratio,
		      double elapsed_s, const char *why_empty)
{
	const struct bt_detect_stats *st = &v->st;
	uint64_t throttling;

	memset(v, 0, sizeof(*v));
	bt_detect_stats(d, &v->st);
	bt_peer_verdict_build(&v->peers, bt_detect_peers(d), 0);
	v->elapsed_s = elapsed_s;
	v->collapse_ratio = collapse_ratio;
	v->collapses = sum_causes(st->collapses);
	sum_stalls(st, &v->stalls, &v->stalled_ns);
	throttling = sum_causes(st->throttling);
	if (!st->samples) {
		snprintf(v->text, sizeof(v->text),
			 "No BBR rate sample was seen in %.0f s: no traced flow sent data. %s",
			 elapsed_s, why_empty ? why_empty : "");
		return;
	}
	if (!v->collapses) {
		snprintf(v->text, sizeof(v->text),
			 "The bandwidth estimate never collapsed (by %.0f%% or more) in %.0f s "
			 "(%llu samples, %llu %s, app-limited %.0f%% of the time).",
			 collapse_ratio * 100, elapsed_s, (unsigned long long)st->samples,
			 (unsigned long long)st->flows, tk_plural(st->flows, "flow", "flows"),
			 (double)st->app_limited_samples * 100 / (double)st->samples);
		stall_sentence(v);
		peers_sentence(v);
		return;
	}
	headline(v, throttling);
	throttling_clauses(v);
	harmless_clause(v, throttling);
	vt_cat(v->text, sizeof(v->text), ".");
	fix_of(v, throttling);
	stall_sentence(v);
	peers_sentence(v);
}

/* the harm of the window into the record's figures (no medians: they are the
 * whole trace's) */
static void window_stats(struct bt_verdict *v, const struct bt_harm *w)
{
	struct bt_detect_stats *st = &v->st;

	memcpy(st->collapses, w->collapses, sizeof(st->collapses));
	memcpy(st->throttling, w->throttling, sizeof(st->throttling));
	st->throttled_ns = w->throttled_ns;
	st->late_bytes = w->late_bytes;
	memcpy(st->stalls, w->stalls, sizeof(st->stalls));
	memcpy(st->stalled_ns, w->stalled_ns, sizeof(st->stalled_ns));
	memcpy(st->nagle_ended, w->nagle_ended, sizeof(st->nagle_ended));
	st->flows = w->flows;
	memset(&st->delack, 0, sizeof(st->delack));
	memset(&st->rate, 0, sizeof(st->rate));
}

void bt_verdict_build_window(struct bt_verdict *v, const struct bt_detect *d, uint64_t now_ns)
{
	const struct bt_detect_stats *st = &v->st;
	uint64_t throttling;
	struct bt_harm w;
	char held[32], late[32];

	memset(v, 0, sizeof(*v));
	bt_detect_stats(d, &v->st);
	bt_peers_window(bt_detect_peers(d), NULL, now_ns, &w);
	window_stats(v, &w);
	bt_peer_verdict_build(&v->peers, bt_detect_peers(d), now_ns);
	v->window = true;
	v->elapsed_s = (double)v->peers.window_ns / TK_NSEC_PER_SEC_F;
	v->collapses = sum_causes(st->collapses);
	sum_stalls(st, &v->stalls, &v->stalled_ns);
	throttling = sum_causes(st->throttling);
	snprintf(v->text, sizeof(v->text), "In the last %u min, %u %s with flows: ", BT_WINDOW_MIN,
		 v->peers.peers, tk_plural(v->peers.peers, "peer", "peers"));
	vt_cat(v->text, sizeof(v->text), "the bandwidth estimate collapsed %llu %s",
	       (unsigned long long)v->collapses, tk_plural(v->collapses, "time", "times"));
	if (throttling) {
		vt_us(held, sizeof(held), st->throttled_ns / TK_NSEC_PER_USEC);
		vt_bytes(late, sizeof(late), st->late_bytes);
		vt_cat(v->text, sizeof(v->text), ", %llu of them throttling (%s, %s held back)",
		       (unsigned long long)throttling, held, late);
	}
	if (v->stalls) {
		vt_us(held, sizeof(held), v->stalled_ns / TK_NSEC_PER_USEC);
		vt_cat(v->text, sizeof(v->text), "; the senders stalled %llu %s (%llu by Nagle), %s in all",
		       (unsigned long long)v->stalls, tk_plural(v->stalls, "time", "times"),
		       (unsigned long long)st->stalls[BT_STALL_NAGLE], held);
	}
	vt_cat(v->text, sizeof(v->text), ".");
	if (!v->peers.harmed) {
		vt_cat(v->text, sizeof(v->text), " No peer was held back enough to act on: no action is needed.");
		return;
	}
	vt_cat(v->text, sizeof(v->text), " %s", v->peers.text);
	if (v->peers.ntop) {
		snprintf(v->fix, sizeof(v->fix), "%s", v->peers.top[0].fix);
	}
}

void bt_verdict_no_stalls(struct bt_verdict *v, const char *why)
{
	v->stalls_untraced = true;
	vt_cat(v->text, sizeof(v->text), " The sender's stalls were not traced: %s.", why);
}

void bt_verdict_note_lost(struct bt_verdict *v, uint64_t acks, uint64_t writes, uint64_t unpaired)
{
	if (acks || writes)
		vt_cat(v->text, sizeof(v->text),
		       " Events were lost in a full ring buffer (%llu ACKs, %llu writes): the collapses "
		       "and stalls above are incomplete, and a stall may span lost writes; raise "
		       "--ringbuf-mb or filter flows.",
		       (unsigned long long)acks, (unsigned long long)writes);
	if (unpaired)
		vt_cat(v->text, sizeof(v->text),
		       " %llu ACKs have no sample: bbr_main's entry and exit probes could not be paired "
		       "(calls nested too deep, or in progress when tracing began): the collapses above "
		       "may be incomplete.",
		       (unsigned long long)unpaired);
}

/* the verdict record's fields and values, in order; over `v`, `st`, `dack`,
 * `kv` and the address strings of bt_verdict_write() */
#define VERDICT_FIELDS(X)                                                                  \
	X("elapsed_s", REC_F64, 3, REC_NOCOL, rv_f64(v->elapsed_s))                         \
	X("samples", REC_U64, 0, REC_NOCOL, rv_u64(st->samples))                            \
	X("flows", REC_U64, 0, REC_NOCOL, rv_u64(st->flows))                                \
	X("app_limited_share", REC_F64, 4, REC_NOCOL,                                       \
	  rv_f64(st->samples ? (double)st->app_limited_samples / (double)st->samples : 0))  \
	X("collapse_ratio", REC_F64, 3, REC_NOCOL, rv_f64(v->collapse_ratio))               \
	X("collapses", REC_U64, 0, REC_NOCOL, rv_u64(v->collapses))                         \
	X("collapses_by_cause", REC_KV, 0, REC_NOCOL, rv_kv(kv, BT_NCAUSES))                \
	X("throttling_by_cause", REC_KV, 0, REC_NOCOL, rv_kv(tkv, BT_NCAUSES))              \
	X("throttled_s", REC_F64, 3, REC_NOCOL, rv_f64((double)st->throttled_ns / TK_NSEC_PER_SEC_F)) \
	X("late_bytes", REC_U64, 0, REC_NOCOL, rv_u64((uint64_t)st->late_bytes))            \
	X("collapses_per_min", REC_F64, 3, REC_NOCOL,                                       \
	  rv_f64(v->elapsed_s > 0 ? (double)v->collapses * 60.0 / v->elapsed_s : 0))       \
	X("delayed_ack_rcv_interval_median_us", REC_U64, 0, REC_NOCOL,                      \
	  dack ? rv_u64(st->delack.rcv_interval_us) : rv_null())                     \
	X("delayed_ack_snd_interval_median_us", REC_U64, 0, REC_NOCOL,                      \
	  dack ? rv_u64(st->delack.snd_interval_us) : rv_null())                     \
	X("delayed_ack_bw_prev_median_bps", REC_U64, 0, REC_NOCOL,                          \
	  dack ? rv_u64(st->delack.bw_prev_bps) : rv_null())                         \
	X("delayed_ack_bw_median_bps", REC_U64, 0, REC_NOCOL,                               \
	  dack ? rv_u64(st->delack.bw_bps) : rv_null())                              \
	X("rate_drop_bw_prev_median_bps", REC_U64, 0, REC_NOCOL,                            \
	  rate ? rv_u64(st->rate.bw_prev_bps) : rv_null())                           \
	X("rate_drop_bw_median_bps", REC_U64, 0, REC_NOCOL,                                 \
	  rate ? rv_u64(st->rate.bw_bps) : rv_null())                                \
	X("sender", REC_STR, 0, REC_NOCOL, dack ? rv_str(sender) : rv_null())               \
	X("receiver", REC_STR, 0, REC_NOCOL, dack ? rv_str(receiver) : rv_null())           \
	X("fix", REC_STR, 0, REC_NOCOL, v->fix[0] ? rv_str(v->fix) : rv_null())             \
	X("stalls_by_cause", REC_KV, 0, REC_NOCOL, trc ? rv_kv(skv, BT_NSTALL_CAUSES) : rv_null()) \
	X("stalled_s", REC_F64, 3, REC_NOCOL, trc ? rv_f64(stalled_s) : rv_null())                 \
	X("nagle_stalls_ended_by", REC_KV, 0, REC_NOCOL, trc ? rv_kv(ekv, BT_NSTALL_ENDS) : rv_null()) \
	X("stall_fix", REC_STR, 0, REC_NOCOL, v->stall_fix[0] ? rv_str(v->stall_fix) : rv_null()) \
	X("window_s", REC_F64, 0, REC_NOCOL, v->peers.window_ns ? rv_f64((double)v->peers.window_ns / TK_NSEC_PER_SEC_F) : rv_null()) \
	X("peers", REC_U64, 0, REC_NOCOL, rv_u64(v->peers.peers))                                \
	X("peers_harmed", REC_U64, 0, REC_NOCOL, rv_u64(v->peers.harmed))                        \
	X("worst_peers", REC_RAW, 0, REC_NOCOL, rv_raw(peers_json))                             \
	X("text", REC_STR, 0, REC_COL("verdict", -100, 0, 0), rv_str(v->text))

static const struct rec_field verdict_fields[] = { VERDICT_FIELDS(REC_FIELD) };
const struct rec_schema bt_verdict_schema = { "verdict", verdict_fields,
					      ARRAY_SIZE(verdict_fields) };
const struct rec_schema bt_window_verdict_schema = { "window_verdict", verdict_fields,
						     ARRAY_SIZE(verdict_fields) };

void bt_verdict_by_cause(const struct bt_verdict *v, struct rec_kv kv[BT_NCAUSES])
{
	for (int i = 0; i < BT_NCAUSES; i++) {
		kv[i].key = bt_cause_names[i];
		kv[i].val = v->st.collapses[i];
	}
}

void bt_verdict_throttled_us_by_cause(const struct bt_verdict *v, struct rec_kv kv[BT_NCAUSES])
{
	for (int i = 0; i < BT_NCAUSES; i++) {
		kv[i].key = bt_cause_names[i];
		kv[i].val = v->st.throttled_ns_by[i] / TK_NSEC_PER_USEC;
	}
}

void bt_verdict_stalls_by_cause(const struct bt_verdict *v, struct rec_kv kv[BT_NSTALL_CAUSES])
{
	for (int i = 0; i < BT_NSTALL_CAUSES; i++) {
		kv[i].key = bt_stall_cause_names[i];
		kv[i].val = v->st.stalls[i];
	}
}

void bt_verdict_throttling_by_cause(const struct bt_verdict *v, struct rec_kv kv[BT_NCAUSES])
{
	for (int i = 0; i < BT_NCAUSES; i++) {
		kv[i].key = bt_cause_names[i];
		kv[i].val = v->st.throttling[i];
	}
}

int bt_verdict_write(struct rec_writer *w, const struct bt_verdict *v)
{
	const struct bt_detect_stats *st = &v->st;
	bool dack = st->collapses[BT_CAUSE_DELAYED_ACK] > 0 && !v->window;
	bool rate = st->collapses[BT_CAUSE_RATE_DROP] > 0 && !v->window;
	bool trc = !v->stalls_untraced;
	char sender[BT_ADDR_STR], receiver[BT_ADDR_STR];
	struct rec_kv kv[BT_NCAUSES], tkv[BT_NCAUSES], skv[BT_NSTALL_CAUSES], ekv[BT_NSTALL_ENDS];
	double stalled_s = (double)v->stalled_ns / TK_NSEC_PER_SEC_F;
	char peers_json[4096]; /* three peers with their fixes, escaped */

	bt_peer_verdict_json(&v->peers, peers_json, sizeof(peers_json));
	bt_verdict_by_cause(v, kv);
	bt_verdict_throttling_by_cause(v, tkv);
	bt_verdict_stalls_by_cause(v, skv);
	for (int i = 0; i < BT_NSTALL_ENDS; i++) {
		ekv[i].key = bt_stall_end_names[i];
		ekv[i].val = st->nagle_ended[i];
	}
	fmt_ends(&st->delack_ends, sender, receiver);
	struct rec_value vals[] = { VERDICT_FIELDS(REC_VALUE) };
	_Static_assert(ARRAY_SIZE(vals) == ARRAY_SIZE(verdict_fields), "a value per field");
	return rec_write(w, v->window ? &bt_window_verdict_schema : &bt_verdict_schema, vals);
}
