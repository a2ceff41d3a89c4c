/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * GTP-U (3GPP TS 29.281) codec, and the N3 frame around it.
 *
 * gtpu_parse() reads one GTP-U message (a UDP payload): the mandatory 8-byte
 * header (flags, message type, length, TEID), the optional sequence number,
 * N-PDU number and next-extension type, and the chain of extension headers,
 * including the PDU Session Container (type 0x85, TS 38.415) with its QFI.
 * gtpu_build_hdr() writes the same header.
 *
 * gtpu_parse_frame() reads a whole N3 frame: Ethernet (up to two VLAN tags),
 * IPv4 or IPv6 (extension headers skipped), UDP to port 2152, GTP-U, and
 * the inner IPv4/IPv6 5-tuple of a G-PDU.
 *
 * Nothing is read outside [buf, buf + len). Every malformation has its own
 * negative status; gtpu_strerror() names it.
 */
#ifndef UP_GTPU_H
#define UP_GTPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GTPU_PORT 2152
#define GTPU_HDR_LEN 8      /* mandatory part */
#define GTPU_OPT_LEN 4      /* sequence (2), N-PDU (1), next extension type (1) */
#define GTPU_MAX_EXT 16     /* longer extension chains are malformed */

/* first octet: version (3 bits), PT, spare, E, S, PN */
#define GTPU_FLAG_PT 0x10
#define GTPU_FLAG_E  0x04
#define GTPU_FLAG_S  0x02
#define GTPU_FLAG_PN 0x01

/* message types (TS 29.281 table 6.1-1) */
#define GTPU_MSG_ECHO_REQ   1
#define GTPU_MSG_ECHO_RESP  2
#define GTPU_MSG_ERROR_IND  26
#define GTPU_MSG_END_MARKER 254
#define GTPU_MSG_GPDU       255

/* extension header types (TS 29.281 figure 5.2.1-3) */
#define GTPU_EXT_NONE        0x00
#define GTPU_EXT_UDP_PORT    0x40
#define GTPU_EXT_PDU_SESSION 0x85
#define GTPU_EXT_PDCP_NUMBER 0xC0

/* PDU Session Container PDU types (TS 38.415) */
#define GTPU_PDU_DL 0
#define GTPU_PDU_UL 1

enum gtpu_status {
	GTPU_OK = 0,
	/* not malformed: not user data for a GTP-U path */
	GTPU_NOT_GTPU = 1,      /* not IPv4/IPv6 UDP to port 2152, or an IP fragment */
	GTPU_NOT_GPDU = 2,      /* GTP-U signalling: echo, error indication, end marker */
	/* malformed: counted and dropped */
	GTPU_ERR_FRAME = -1,    /* Ethernet or VLAN header truncated */
	GTPU_ERR_IP = -2,       /* outer IP header truncated or inconsistent */
	GTPU_ERR_UDP = -3,      /* UDP header truncated or its length inconsistent */
	GTPU_ERR_SHORT = -4,    /* shorter than the GTP-U header (8 octets, 12 with E/S/PN) */
	GTPU_ERR_VERSION = -5,  /* version is not 1 */
	GTPU_ERR_PT = -6,       /* protocol type 0 (GTP') */
	GTPU_ERR_LENGTH = -7,   /* length field does not match the bytes present */
	GTPU_ERR_EXT_ZERO = -8, /* extension header of length 0 */
	GTPU_ERR_EXT_TRUNC = -9, /* extension header runs past the message */
	GTPU_ERR_EXT_CHAIN = -10, /* more than GTPU_MAX_EXT extension headers */
	GTPU_ERR_INNER = -11,   /* T-PDU claims IP but its header is truncated or inconsistent */
};
#define GTPU_ERR_MIN GTPU_ERR_INNER

struct gtpu_hdr {
	uint8_t flags;          /* the first octet as sent */
	uint8_t version;
	uint8_t msg_type;
	uint16_t length;        /* length field: octets after the first 8 */
	uint32_t teid;
	bool has_opt;           /* E, S or PN set: the next three fields are present */
	uint16_t seq;
	uint8_t npdu;
	uint8_t next_ext;       /* next extension header type field */
	uint8_t n_ext;          /* extension headers walked (only when E is set) */
	uint8_t ext_type[GTPU_MAX_EXT];
	bool has_pdu_session;   /* a PDU Session Container was found */
	uint8_t pdu_type;       /* GTPU_PDU_DL or GTPU_PDU_UL */
	uint8_t qfi;            /* 6 bits */
	uint16_t hdr_len;       /* octets before the T-PDU */
	uint16_t tpdu_len;      /* octets of the T-PDU */
};

/*
 * Parse one GTP-U message of exactly `len` octets (the UDP payload).
 * Returns GTPU_OK or a negative GTPU_ERR_*. `h` is filled as far as parsed.
 */
int gtpu_parse(const uint8_t *buf, size_t len, struct gtpu_hdr *h);

/* a sentence for any status of this header, e.g. "extension header of length 0" */
const char *gtpu_strerror(int status);
/* a short token for a status: "ok", "not_gtpu", "bad_version", ... */
const char *gtpu_status_name(int status);

struct gtpu_ext_spec {
	uint8_t type;
	uint8_t len4;           /* length in 4-octet units, >= 1 */
	const uint8_t *content; /* len4 * 4 - 2 octets; NULL: zeros */
};

struct gtpu_build {
	uint8_t msg_type;       /* GTPU_MSG_GPDU for user data */
	uint32_t teid;
	bool seq_present;       /* S flag */
	uint16_t seq;
	bool npdu_present;      /* PN flag */
	uint8_t npdu;
	/* extension headers other than the PDU Session Container, sent first */
	unsigned int n_extra;
	struct gtpu_ext_spec extra[4];
	bool pdu_session;       /* append a PDU Session Container (E flag) */
	uint8_t pdu_type;
	uint8_t qfi;
};

/* header octets gtpu_build_hdr() writes for this spec */
size_t gtpu_hdr_size(const struct gtpu_build *b);
/*
 * Write the header for a T-PDU of tpdu_len octets that follows it.
 * Returns the header length, or 0 when cap is too small or the message
 * would not fit the 16-bit length field.
 */
size_t gtpu_build_hdr(uint8_t *buf, size_t cap, const struct gtpu_build *b, size_t tpdu_len);

/* ---- the N3 frame ----------------------------------------------------------- */

/* what the data path needs from one frame: 56 bytes, no pointers */
struct gtpu_pkt {
	uint32_t teid;
	uint16_t tpdu_off;      /* T-PDU offset from the frame start */
	uint16_t tpdu_len;
	uint8_t msg_type;
	uint8_t outer_family;   /* 4 or 6 */
	uint8_t inner_family;   /* 4, 6, or 0 for a T-PDU that is not IP */
	uint8_t proto;          /* inner protocol */
	uint8_t qfi;
	uint8_t has_qfi;
	uint8_t pdu_type;
	uint8_t pad;
	uint16_t inner_len;     /* inner IP total length (header included) */
	uint16_t sport, dport;  /* inner ports (0 when none) */
	uint16_t pad2;
	uint8_t src[16], dst[16]; /* inner addresses; IPv4 in the first 4 octets */
};

/*
 * Parse an Ethernet frame down to the inner 5-tuple. Returns GTPU_OK for a
 * G-PDU, GTPU_NOT_GTPU / GTPU_NOT_GPDU for traffic that is not user data,
 * or a negative GTPU_ERR_*. `hdr`, when not NULL, receives the full GTP-U
 * header. Without `hdr`, the common shape of an N3 frame is recognised
 * first by gtpu_parse_frame_fast(); every other frame takes the general
 * path, which is the only one taken with `hdr`.
 */
int gtpu_parse_frame(const uint8_t *frame, size_t len, struct gtpu_pkt *p, struct gtpu_hdr *hdr);

/*
 * The fast path alone (gtpu_fast.h has it inline): GTPU_OK with exactly the
 * packet gtpu_parse_frame() gives, for the common shape of an N3 frame, or
 * GTPU_FAST_NO for any other frame, well-formed or not.
 */
#define GTPU_FAST_NO 1000
int gtpu_parse_frame_fast(const uint8_t *frame, size_t len, struct gtpu_pkt *p);

struct gtpu_frame_spec {
	uint8_t dst_mac[6], src_mac[6];
	int outer_family;       /* 4 or 6 */
	uint8_t outer_src[16], outer_dst[16];
	uint16_t sport;         /* usually GTPU_PORT */
	uint8_t ttl;
	struct gtpu_build gtp;
};

/*
 * Ethernet + outer IP + UDP + GTP-U header + the T-PDU, with the outer IPv4
 * header checksum and the UDP checksum computed. Returns the frame length,
 * or 0 when it does not fit cap.
 */
size_t gtpu_build_frame(uint8_t *buf, size_t cap, const struct gtpu_frame_spec *s,
			const uint8_t *tpdu, size_t tpdu_len);

/* internet checksum helpers, shared with the traffic generator */
uint32_t gtpu_csum_add(uint32_t sum, const uint8_t *p, size_t len);
uint16_t gtpu_csum_fold(uint32_t sum);
/* recompute the outer/inner IPv4 header checksums and the L4 checksums of a frame */
void gtpu_frame_fix_checksums(uint8_t *frame, size_t len);

#endif
