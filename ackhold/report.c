// SPDX-License-Identifier: GPL-2.0-only
/* ackhold's records: hold, peer and verdict, each schema written once. */
#include <string.h>

#include "cli.h"
#include "common.h"

#include "ackhold/report.h"

static struct rec_value ms(uint64_t ns)
{
	return rv_f64((double)ns * TK_MSEC_PER_NSEC_F);
}

#define HOLD_FIELDS(X)                                                                              \
	X("t_ns", REC_U64, 0, REC_NOCOL, rv_u64(h->ack_ns))                                          \
	X("peer", REC_STR, 0, REC_COL("peer", -16, 0, 0), rv_str(peer))                             \
	X("port", REC_U64, 0, REC_COL("port", 5, 0, 0), rv_u64(id->lport))                          \
	X("cookie", REC_U64, 0, REC_NOCOL, rv_u64(id->cookie))                                        \
	X("hold_ms", REC_F64, 3, REC_COL("hold ms", 8, 0, 1), h->unseen ? rv_null() : ms(h->hold_ns)) \
	X("quiet_ms", REC_F64, 3, REC_COL("quiet ms", 8, 0, 1), h->unseen ? rv_null() : ms(h->quiet_ns)) \
	X("resume_ms", REC_F64, 3, REC_COL("resume ms", 9, 0, 1),                                   \
	  h->resume_ns == AH_NO_RESUME ? rv_null() : ms(h->resume_ns))                             \
	X("segs", REC_U64, 0, REC_COL("segs", 5, 0, 0), rv_u64(h->segs))                            \
	X("bytes", REC_U64, 0, REC_COL("bytes", 7, 0, 0), rv_u64(h->bytes))                         \
	X("last_len", REC_U64, 0, REC_NOCOL, rv_u64(h->last_len))                                   \
	X("mss", REC_U64, 0, REC_NOCOL, rv_u64(h->mss))                                             \
	X("rtt_us", REC_U64, 0, REC_COL("rtt us", 7, 0, 0), rv_u64(h->rtt_us))                      \
	X("timer", REC_BOOL, 0, REC_NOCOL, rv_bool(h->timer))                                       \
	X("answer", REC_BOOL, 0, REC_NOCOL, rv_bool(h->answer))                                     \
	X("repair", REC_BOOL, 0, REC_NOCOL, rv_bool(h->repair))                                     \
	X("armed", REC_BOOL, 0, REC_NOCOL, rv_bool(h->armed))                                       \
	X("ack", REC_U64, 0, REC_NOCOL, rv_u64(h->ack))                                             \
	X("ended_by", REC_STR, 0, REC_COL("ended by", -8, 0, 0), rv_str(ah_end_names[ah_hold_end(h)])) \
	X("waited", REC_BOOL, 0, REC_COL("waited", 7, 0, 0), rv_bool(ah_hold_waited(h)))            \
	X("nagle", REC_BOOL, 0, REC_COL("nagle", 6, 0, 0), rv_bool(ah_hold_nagle(h)))

static const struct rec_field hold_fields[] = { HOLD_FIELDS(REC_FIELD) };
const struct rec_schema ah_hold_schema = { "hold", hold_fields, ARRAY_SIZE(hold_fields), true };

int ah_write_hold(struct rec_writer *w, const struct ah_id *id, const struct ah_hold *h)
{
	char peer[64];

	ah_addr_text(id->raddr, id->family, peer, sizeof(peer));
	{
		struct rec_value v[] = { HOLD_FIELDS(REC_VALUE) };

		return rec_write(w, &ah_hold_schema, v);
	}
}

#define PEER_FIELDS(X)                                                                              \
	X("peer", REC_STR, 0, REC_COL("peer", -16, 0, 0), rv_str(peer))                             \
	X("port", REC_U64, 0, REC_COL("port", 5, 0, 0), rv_u64(p->port))                            \
	X("flows", REC_U64, 0, REC_COL("flows", 5, 0, 0), rv_u64(p->flows))                         \
	X("segs", REC_U64, 0, REC_NOCOL, rv_u64(p->segs))                                           \
	X("bytes", REC_U64, 0, REC_NOCOL, rv_u64(p->bytes))                                         \
	X("acks", REC_U64, 0, REC_COL("acks", 7, 0, 0), rv_u64(p->acks))                            \
	X("timer_acks", REC_U64, 0, REC_COL("timer", 6, 0, 0), rv_u64(p->timer_acks))               \
	X("holds", REC_U64, 0, REC_COL("holds", 6, 0, 0), rv_u64(p->holds))                         \
	X("timer_holds", REC_U64, 0, REC_COL("by timer", 8, 0, 0), rv_u64(p->timer_holds))          \
	X("app_holds", REC_U64, 0, REC_COL("by app", 6, 0, 0), rv_u64(p->app_holds))                \
	X("data_holds", REC_U64, 0, REC_COL("by data", 7, 0, 0), rv_u64(p->data_holds))             \
	X("repair_holds", REC_U64, 0, REC_NOCOL, rv_u64(p->repair_holds))                           \
	X("late_holds", REC_U64, 0, REC_NOCOL, rv_u64(p->late_holds))                               \
	X("unseen_holds", REC_U64, 0, REC_NOCOL, rv_u64(p->unseen_holds))                           \
	X("held_ms", REC_F64, 3, REC_COL("held ms", 9, 0, 1), ms(p->held_ns))                       \
	X("max_hold_ms", REC_F64, 3, REC_COL("max ms", 7, 0, 1), ms(p->max_hold_ns))                \
	X("waits", REC_U64, 0, REC_COL("waits", 6, 0, 0), rv_u64(p->waits))                         \
	X("waited_ms", REC_F64, 3, REC_COL("waited ms", 10, 0, 1), ms(p->waited_ns))                \
	X("time_s", REC_F64, 3, REC_COL("time s", 8, 0, 1), rv_f64((double)p->time_ns * TK_SEC_PER_NSEC_F)) \
	X("held_pct", REC_F64, 2, REC_COL("held %", 7, 0, 2), rv_f64(ah_peer_held_share(p) * 100.0))     \
	X("waited_pct", REC_F64, 2, REC_COL("waited %", 9, 0, 2), rv_f64(ah_peer_waited_share(p) * 100.0)) \
	X("nagle", REC_U64, 0, REC_COL("nagle", 6, 0, 0), rv_u64(p->nagle))

static const struct rec_field peer_fields[] = { PEER_FIELDS(REC_FIELD) };
const struct rec_schema ah_peer_schema = { "peer", peer_fields, ARRAY_SIZE(peer_fields), true };

int ah_write_peer(struct rec_writer *w, const struct ah_peer *p)
{
	char peer[64];

	ah_addr_text(p->addr, p->family, peer, sizeof(peer));
	{
		struct rec_value v[] = { PEER_FIELDS(REC_VALUE) };

		return rec_write(w, &ah_peer_schema, v);
	}
}

#define VERDICT_FIELDS(X)                                                                         \
	X("peers", REC_U64, 0, REC_NOCOL, rv_u64(peers))                                          \
	X("lost", REC_U64, 0, REC_NOCOL, rv_u64(cnt[AH_CNT_LOST]))                                \
	X("untracked_segs", REC_U64, 0, REC_NOCOL, rv_u64(cnt[AH_CNT_UNTRACKED]))                 \
	X("unseen_acks", REC_U64, 0, REC_NOCOL, rv_u64(cnt[AH_CNT_UNSEEN]))                       \
	X("skipped_runs", REC_U64, 0, REC_NOCOL, rv_u64(cnt[AH_CNT_SKIPPED]))                     \
	X("text", REC_STR, 0, REC_COL("verdict", -100, 0, 0), rv_str(text))

static const struct rec_field verdict_fields[] = { VERDICT_FIELDS(REC_FIELD) };
const struct rec_schema ah_verdict_schema = { "verdict", verdict_fields, ARRAY_SIZE(verdict_fields), true };

int ah_write_verdict(struct rec_writer *w, const uint64_t cnt[AH_CNT_ALL], size_t peers, const char *text)
{
	struct rec_value v[] = { VERDICT_FIELDS(REC_VALUE) };

	return rec_write(w, &ah_verdict_schema, v);
}
