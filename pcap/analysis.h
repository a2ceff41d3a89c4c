/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One pass over a capture: TCP flows, per direction packet and byte counts
 * (the way tshark's conv,tcp and tcptrace count them), throughput bins, and
 * the ACK stream matched against the data it covers.
 *
 * A flow's side A is the source of its first packet (tshark and tcptrace do
 * the same); d[0] is A->B, d[1] is B->A. Sequence numbers are unwrapped to 64
 * bits per direction, so a flow of more than 4 GiB counts right.
 *
 * Nothing is allocated per packet: per-direction arrays (bins, segments in
 * flight, ACK delays) grow by doubling.
 */
#ifndef PCAP_ANALYSIS_H
#define PCAP_ANALYSIS_H

#include <stdbool.h>
#include <stdint.h>

#include "pcap/capfile.h"
#include "pcap/decode.h"

#define AN_MAX_SEGS (4u << 20) /* segments awaiting an ACK; beyond, the oldest are forgotten */

struct an_endpoint {
	uint8_t family;          /* 4 or 6; 0 in a selector: any */
	bool any_addr;           /* selector only */
	bool any_port;           /* selector only */
	uint8_t addr[16];
	uint16_t port;
};

/* --flow: a flow number, or one or two endpoints (either direction) */
struct an_sel {
	uint32_t id;             /* 0: by endpoints */
	unsigned int nend;       /* 1 or 2 */
	struct an_endpoint end[2];
};

struct an_bin {
	uint64_t idx;            /* bin number from the capture's first frame */
	uint32_t frames;
	uint32_t data_frames;
	uint64_t wire_bytes;     /* frame lengths, as tshark's io,stat counts */
	uint64_t data_bytes;     /* TCP payload, retransmissions included */
	uint64_t acked_bytes;    /* cumulative ACK advance for this direction's data */
};

/* a data segment waiting for its ACK */
struct an_seg {
	uint64_t end;            /* unwrapped sequence just after it */
	int64_t ts_ns;           /* its (last) transmission */
	uint64_t frame;
	uint32_t len;
	bool rexmt;
};

struct an_hole {
	uint64_t start, end;
};

enum an_side { AN_SIDE_UNKNOWN = 0, AN_SIDE_SENDER, AN_SIDE_RECEIVER };
enum an_side_basis {
	AN_BASIS_NONE = 0,
	AN_BASIS_HANDSHAKE,   /* SYN -> SYN/ACK much longer than SYN/ACK -> ACK: near the client */
	AN_BASIS_OPTION,      /* --side */
	AN_BASIS_PKTTYPE,     /* Linux cooked capture: the data is outgoing or incoming */
	AN_BASIS_TTL,         /* one side's packets keep their initial TTL, the other's were routed */
};
/* the handshake counts only when one of its gaps is this many times the other */
#define AN_SIDE_RATIO 4

struct an_dir {
	/* counts, tcptrace's names */
	uint64_t pkts, wire_bytes;
	uint64_t data_pkts, data_bytes;
	uint64_t rexmt_pkts, rexmt_bytes;
	uint64_t unique_bytes;
	uint64_t pure_acks;
	uint32_t syns, fins, rsts;
	int64_t first_ns, last_ns;
	uint64_t max_payload;
	uint64_t outgoing_pkts, incoming_pkts; /* Linux cooked captures */
	uint64_t initial_ttl_pkts;             /* TTL 64, 128 or 255: not routed yet */

	/* this direction's sequence space */
	bool seq_init;
	uint64_t hi_end;         /* highest data byte sent + 1 */
	uint64_t data_start;     /* first data byte */
	struct an_hole *holes;   /* bytes not seen yet below hi_end, as many as there are */
	uint64_t nholes, cap_holes;
	uint16_t mss_opt;        /* from this side's SYN */
	bool ts_opt;
	uint32_t mss_len[8], mss_cnt[8]; /* frequent payload lengths (no SYN seen) */

	/* ACKs that the other side sent for this direction's data */
	bool ack_init;
	uint64_t acked_to;       /* highest cumulative ACK, unwrapped */
	uint16_t ack_win;        /* the window field of the last ACK (as on the wire) */
	uint64_t acks, acks_adv, dupacks;
	int64_t last_adv_ns;
	struct an_seg *segs;     /* ring, ordered by end */
	uint32_t seg_head, seg_len, seg_cap;
	int64_t covered_ts_ns;   /* newest data covered so far */
	uint64_t covered_frame;
	uint32_t covered_len;
	bool covered_valid;
	/* ACK delays of advancing ACKs, ns */
	int64_t *delays;
	uint64_t ndelays, cap_delays;
	uint64_t seg_hist[6];    /* segments per advancing ACK: 1, 2, 3-4, 5-8, 9-16, 17+ */
	uint64_t segs_acked;
	uint64_t candidates;

	/* throughput bins that saw something, in order (sparse: a clock jump
	 * costs nothing) */
	struct an_bin *bins;
	uint64_t nbins, cap_bins;
	int64_t last_bin_lo_ns, last_bin_hi_ns; /* the last bin's span, relative to t0 */
};

struct an_flow {
	uint32_t id;             /* 1-based, in order of first packet */
	uint8_t family;
	uint8_t addr[2][16];     /* [0] = A, the first packet's source */
	uint16_t port[2];
	bool selected;
	struct an_dir d[2];
	int64_t first_ns, last_ns;
	/* handshake times for the side detection */
	int64_t syn_ns, synack_ns, hs_ack_ns;
	int syn_dir;             /* -1: no SYN seen */
	enum an_side side[2];    /* capture side relative to each direction's data sender */
	enum an_side_basis side_basis[2];
	struct an_flow *hnext;   /* hash chain */
};

struct an_ack {
	uint64_t frame;
	int64_t ts_ns;
	int data_dir;            /* the direction whose data is acknowledged */
	uint32_t ack;            /* as on the wire */
	uint64_t ack64;
	bool advancing;          /* raises the highest cumulative ACK */
	bool dupack;             /* a duplicate ACK as RFC 5681 defines it: data outstanding,
	                          * the highest number again, with no data, SYN, FIN or
	                          * RST and the window unchanged (counted in an_dir.dupacks) */
	uint64_t acked_bytes;
	uint32_t acked_segs;     /* ceil(acked_bytes / mss) */
	uint32_t covered_pkts;   /* data frames fully covered by this ACK */
	int64_t delay_ns;        /* after the newest data covered; -1 if unknown */
	uint64_t data_frame;     /* that data's frame, 0 if unknown */
	uint32_t data_len;
	bool runt;               /* newest covered data shorter than the MSS */
	bool single;             /* covers at most one MSS */
	bool candidate;          /* delayed-ACK candidate */
	uint32_t mss;
};

/* a silence of a flow: no frame either way for at least an_config.gap_ns */
struct an_gap {
	int64_t start_ns, end_ns; /* the frames around it */
	uint64_t frame;          /* the frame that ended it */
	bool data[2];            /* the direction (from addr[i]) had carried data */
	uint64_t inflight[2];    /* its bytes sent and not yet ACKed, as the gap began */
};

struct an_config {
	int64_t bin_ns;          /* 0: no throughput bins */
	bool acks;               /* track segments and ACK delays */
	uint32_t mss;            /* 0: from the SYN, else guessed */
	int64_t delack_ns;       /* delayed-ACK candidate threshold */
	enum an_side side;       /* AN_SIDE_UNKNOWN: detect */
	const struct an_sel *sel;
	unsigned int nsel;
	void (*on_ack)(void *ctx, const struct an_flow *f, const struct an_ack *a);
	int64_t gap_ns;          /* on_gap's shortest silence */
	void (*on_gap)(void *ctx, const struct an_flow *f, const struct an_gap *g);
	void *ctx;
};

struct an {
	struct an_config cfg;
	struct an_flow **flows;  /* by id - 1 */
	uint32_t nflows, cap_flows;
	struct an_flow **hash;
	uint32_t hash_mask;
	struct an_flow *last;
	/* whole capture */
	uint64_t frames, tcp_frames, other_frames, trunc_frames, bad_frames;
	int64_t t0_ns, tlast_ns;
	bool have_t0;
	uint32_t linktypes[8];
	unsigned int nlinktypes;
	bool oom;
};

struct an *an_new(const struct an_config *cfg);
void an_free(struct an *a);
/* feed one frame; frames must come in file order (a set's: in its order) */
void an_frame(struct an *a, const struct cap_frame *fr);
/* after the last frame: side detection */
void an_finish(struct an *a);
/*
 * Reads the whole file into a. 0 at the end of the file, -1 when the file is
 * damaged (message in c->err): a holds everything before the damage.
 */
int an_run(struct an *a, struct cap_file *c);
/* the same over a set of files read as one (capfile.h's cap_set); -1 when
 * one is damaged or cannot be opened (message in s->err, file in s->err_path) */
int an_run_set(struct an *a, struct cap_set *s);

/* MSS used for a direction's data */
uint32_t an_dir_mss(const struct an *a, const struct an_flow *f, int dir);
/* delay percentile (0..100) of a direction's advancing ACKs, ns; -1 when none */
int64_t an_delay_pct(struct an_dir *d, double pct);
bool an_flow_selected(const struct an_sel *sel, unsigned int nsel, const struct an_flow *f);

/* "10.0.0.1:5201", "[fd00::1]:5201" */
const char *an_fmt_endpoint(uint8_t family, const uint8_t *addr, uint16_t port, char *buf, size_t len);
const char *an_fmt_addr(uint8_t family, const uint8_t *addr, char *buf, size_t len);
/* parses a --flow value; -1 with a reason in err */
int an_sel_parse(const char *s, struct an_sel *out, char *err, size_t errlen);

/* "sender", "receiver", "unknown" */
const char *an_side_name(enum an_side s);
/* --side's values by enum an_side: "auto" (AN_SIDE_UNKNOWN: detect), "sender", "receiver" */
extern const char *const an_side_choices[];
const char *an_basis_name(enum an_side_basis b);

#endif
