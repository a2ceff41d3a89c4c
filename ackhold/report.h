/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ackhold's records, each schema written once: a hold as it resumes, each
 * peer at exit, the verdict. --help's list of keys comes from the same
 * schemas.
 */
#ifndef ACKHOLD_REPORT_H
#define ACKHOLD_REPORT_H

#include <stdint.h>

#include "record.h"

#include "ackhold/peers.h"

extern const struct rec_schema ah_hold_schema, ah_peer_schema, ah_verdict_schema;

int ah_write_hold(struct rec_writer *w, const struct ah_id *id, const struct ah_hold *h);
int ah_write_peer(struct rec_writer *w, const struct ah_peer *p);
int ah_write_verdict(struct rec_writer *w, const uint64_t cnt[AH_CNT_ALL], size_t peers, const char *text);

#endif
