// SPDX-License-Identifier: GPL-2.0-only
/*
 * upfbench decode: every frame of a capture as the GTP-U codec sees it,
 * one record per frame.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "log.h"
#include "record.h"

#include "gtpu.h"
#include "traffic.h"
#include "cmd.h"

#define DECODE_MBR_BPS 100000000              /* decode runs no QER: any rate */

/* one frame as the codec sees it */
struct decoded {
	uint32_t frame;
	int st;
	bool gtp, inner;        /* the GTP-U header parsed; the inner packet too */
	struct gtpu_pkt p;
	struct gtpu_hdr h;
	uint64_t ext[GTPU_MAX_EXT];
	char src[64], dst[64];
};

#define DECODE_FIELDS(X)                                                                         \
	X("frame", REC_U64, 0, REC_COL("frame", 6, 0, 0), rv_u64(d->frame))                       \
	X("status", REC_STR, 0, REC_COL("status", -11, 0, 0), rv_str(gtpu_status_name(d->st)))    \
	X("outer", REC_U64, 0, REC_NOCOL, d->p.outer_family ? rv_u64(d->p.outer_family) : rv_null()) \
	X("msg_type", REC_U64, 0, REC_COL("msg", 3, 0, 0), d->gtp ? rv_u64(h->msg_type) : rv_null()) \
	X("flags", REC_U64, 0, REC_NOCOL, d->gtp ? rv_u64(h->flags) : rv_null())                  \
	X("teid", REC_U64, 0, REC_COL("teid", 10, 0, 0), d->gtp ? rv_u64(h->teid) : rv_null())    \
	X("seq", REC_U64, 0, REC_COL("seq", 5, 0, 0), opt ? rv_u64(h->seq) : rv_null())           \
	X("npdu", REC_U64, 0, REC_NOCOL, opt ? rv_u64(h->npdu) : rv_null())                       \
	X("next_ext", REC_U64, 0, REC_NOCOL, opt ? rv_u64(h->next_ext) : rv_null())               \
	X("ext_types", REC_U64_LIST, 0, REC_COL("ext", -8, 0, 0),                                 \
	  d->gtp ? rv_list(d->ext, h->n_ext) : rv_null())                                         \
	X("pdu_type", REC_U64, 0, REC_NOCOL, pdu ? rv_u64(h->pdu_type) : rv_null())               \
	X("qfi", REC_U64, 0, REC_COL("qfi", 3, 0, 0), pdu ? rv_u64(h->qfi) : rv_null())           \
	X("gtp_len", REC_U64, 0, REC_NOCOL, d->gtp ? rv_u64(h->length) : rv_null())               \
	X("tpdu_len", REC_U64, 0, REC_COL("tpdu", 5, 0, 0), d->gtp ? rv_u64(h->tpdu_len) : rv_null()) \
	X("inner", REC_U64, 0, REC_NOCOL, d->st == GTPU_OK ? rv_u64(d->p.inner_family) : rv_null()) \
	X("inner_src", REC_STR, 0, REC_COL("inner src", -20, 0, 0), d->inner ? rv_str(d->src) : rv_null()) \
	X("inner_dst", REC_STR, 0, REC_COL("inner dst", -20, 0, 0), d->inner ? rv_str(d->dst) : rv_null()) \
	X("proto", REC_U64, 0, REC_COL("proto", 5, 0, 0), d->inner ? rv_u64(d->p.proto) : rv_null()) \
	X("sport", REC_U64, 0, REC_COL("sport", 5, 0, 0), d->inner ? rv_u64(d->p.sport) : rv_null()) \
	X("dport", REC_U64, 0, REC_COL("dport", 5, 0, 0), d->inner ? rv_u64(d->p.dport) : rv_null()) \
	X("inner_len", REC_U64, 0, REC_COL("len", 5, 0, 0), d->inner ? rv_u64(d->p.inner_len) : rv_null())

static const struct rec_field decode_fields[] = { DECODE_FIELDS(REC_FIELD) };
static const struct rec_schema decode_schema = { "gtpu_packet", decode_fields, ARRAY_SIZE(decode_fields) };

static void decode_frame(const struct up_traffic *t, uint32_t i, struct decoded *d)
{
	memset(d, 0, sizeof(*d));
	d->frame = i + 1;
	d->st = gtpu_parse_frame(t->fbuf + t->foff[i], t->flen[i], &d->p, &d->h);
	/* the GTP-U header itself parsed: report it */
	d->gtp = d->st == GTPU_OK || d->st == GTPU_NOT_GPDU || d->st == GTPU_ERR_INNER;
	d->inner = d->st == GTPU_OK && d->p.inner_family;
	if (d->gtp)
		for (int k = 0; k < d->h.n_ext; k++)
			d->ext[k] = d->h.ext_type[k];
	if (d->inner) {
		int fam = d->p.inner_family == 4 ? AF_INET : AF_INET6;

		inet_ntop(fam, d->p.src, d->src, sizeof(d->src));
		inet_ntop(fam, d->p.dst, d->dst, sizeof(d->dst));
	}
}

static int write_decoded(struct rec_writer *w, const struct decoded *d)
{
	const struct gtpu_hdr *h = &d->h;
	bool opt = d->gtp && h->has_opt, pdu = d->gtp && h->has_pdu_session;
	struct rec_value v[] = { DECODE_FIELDS(REC_VALUE) };

	return rec_write(w, &decode_schema, v);
}

int up_cmd_decode(struct up_args *a)
{
	struct up_traffic t;
	struct rec_writer *w;
	char err[256];
	FILE *out;
	int rc = 0;

	if (up_traffic_pcap(&t, a->pcap_in, DECODE_MBR_BPS, err, sizeof(err))) {
		elog("%s", err);
		return TK_EXIT_DATA;
	}
	out = up_output_open(a);
	w = out ? up_writer_open(a, out) : NULL;
	for (uint32_t i = 0; w && i < t.len && !rc; i++) {
		struct decoded d;

		decode_frame(&t, i, &d);
		rc = write_decoded(w, &d);
	}
	if (!w || rec_writer_free(w) || rc)
		rc = TK_EXIT_FAIL;
	if (up_output_close(a, out))
		rc = TK_EXIT_FAIL;
	up_traffic_free(&t);
	return rc;
}
