// SPDX-License-Identifier: GPL-2.0-only
/*
 * The socket scopes' record types: each connection a new scope set when it
 * was attached (scope_conn), and each scope the journal holds (scope).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "common.h"
#include "output.h"

/* --- scope_conn -------------------------------------------------------------------------- */

#define CONN_FIELDS(X)                                                                         \
	X("side", REC_STR, 0, REC_COL("side", -5, 0, 0), rv_str(qs_side_name(side)))           \
	X("local", REC_STR, 0, REC_COL("local", -22, 0, 0), rv_str(local))                     \
	X("remote", REC_STR, 0, REC_COL("remote", -22, 0, 0), rv_str(remote))                  \
	X("result", REC_STR, 0, REC_COL("result", -8, 0, 0), rv_str(conn->err ? "refused" : "set")) \
	X("error", REC_STR, 0, REC_COL("error", -12, 0, 0),                                    \
	  conn->err ? rv_str(strerror(-conn->err)) : rv_null())                               \
	X("delack_max_us", REC_U64, 0, REC_COL("delack max(us)", 14, 0, 0),                   \
	  side == QS_SIDE_RECV && !conn->err ? rv_u64(conn->value) : rv_null())

static const struct rec_field conn_fields[] = { CONN_FIELDS(REC_FIELD) };
static const struct rec_schema conn_schema = { "scope_conn", conn_fields, ARRAY_SIZE(conn_fields), true };

static void endpoint(const uint8_t addr[16], uint16_t port, char *buf, size_t len)
{
	char a[64];

	cli_fmt_v6mapped(addr, a, sizeof(a));
	snprintf(buf, len, strchr(a, ':') ? "[%s]:%u" : "%s:%u", a, port);
}

int qa_out_scope_conn(struct rec_writer *w, enum qs_side side, const struct qs_conn *conn)
{
	char local[80], remote[80];

	endpoint(conn->saddr, conn->sport, local, sizeof(local));
	endpoint(conn->daddr, conn->dport, remote, sizeof(remote));
	struct rec_value v[] = { CONN_FIELDS(REC_VALUE) };
	_Static_assert(ARRAY_SIZE(v) == ARRAY_SIZE(conn_fields), "a value per field");
	return rec_write(w, &conn_schema, v);
}

/* --- scope ------------------------------------------------------------------------------- */

#define SCOPE_FIELDS(X)                                                                        \
	X("seq", REC_U64, 0, REC_COL("seq", 5, 0, 0), rv_u64(sc->seq))                         \
	X("time", REC_U64, 0, REC_NOCOL, rv_u64(sc->time_s))                                   \
	X("side", REC_STR, 0, REC_COL("side", -5, 0, 0), rv_str(qs_side_name(sc->side)))       \
	X("ports", REC_STR, 0, REC_COL("ports", -12, 0, 0), rv_str(ports))                     \
	X("cgroup", REC_STR, 0, REC_COL("cgroup", -24, 0, 0), rv_str(sc->cgroup))              \
	X("in_force", REC_BOOL, 0, REC_COL("in force", -8, 0, 0), rv_bool(in_force))           \
	X("set_new", REC_U64, 0, REC_COL("set new", 8, 0, 0), rv_u64(k->set_new))             \
	X("set_existing", REC_U64, 0, REC_COL("set before", 10, 0, 0), rv_u64(k->set_existing))\
	X("refused", REC_U64, 0, REC_COL("refused", 7, 0, 0), rv_u64(k->failed))               \
	X("delack_max_us", REC_U64, 0, REC_COL("delack max(us)", 14, 0, 0),                   \
	  sc->side == QS_SIDE_RECV && k->delack_us ? rv_u64(k->delack_us) : rv_null())         \
	X("pin", REC_STR, 0, REC_COL("pin", -30, 0, 0), rv_str(sc->pin))

static const struct rec_field scope_fields[] = { SCOPE_FIELDS(REC_FIELD) };
static const struct rec_schema scope_schema = { "scope", scope_fields, ARRAY_SIZE(scope_fields), true };

int qa_out_scope(struct rec_writer *w, const struct qaj_scope *sc, bool in_force, const struct qs_counts *k)
{
	char ports[QS_PORTS_MAX * 6 + 1];

	qs_ports_text(sc->ports, sc->nports, ports, sizeof(ports));
	struct rec_value v[] = { SCOPE_FIELDS(REC_VALUE) };
	_Static_assert(ARRAY_SIZE(v) == ARRAY_SIZE(scope_fields), "a value per field");
	return rec_write(w, &scope_schema, v);
}

void qa_out_declare_scopes(struct rec_writer *w, enum qa_cmd cmd)
{
	if (cmd == QA_ON || cmd == QA_NODELAY)
		rec_writer_declare(w, &conn_schema);
	if (cmd == QA_STATUS || cmd == QA_RESTORE)
		rec_writer_declare(w, &scope_schema);
}
