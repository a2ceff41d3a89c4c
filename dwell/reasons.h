/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Names of the kernel's drop reasons, read from BTF at run time: the values
 * of enum skb_drop_reason differ between kernels, so none is hard-coded.
 * "SKB_DROP_REASON_SOCKET_RCVBUFF" is shown as "SOCKET_RCVBUFF".
 */
#ifndef UD_REASONS_H
#define UD_REASONS_H

#include <stdbool.h>
#include <stdint.h>

struct btf;

/* a socket's last reason slot once more than UD_MAX_REASONS reasons dropped its
 * datagrams: the sum of every further reason, named OTHER_REASONS */
#define UD_REASON_OTHERS 0xfffffff0u
#define UD_REASON_OTHERS_NAME "OTHER_REASONS"

struct ud_reason {
	uint32_t value;
	char name[48];
};

struct ud_reasons {
	struct ud_reason *v; /* sorted by value */
	unsigned int n;
	bool from_btf;       /* false: the kernel has no enum skb_drop_reason */
};

/*
 * Reads enum skb_drop_reason from btf (NULL: the running kernel's). Returns 0;
 * without the enum (kernels before 5.17) the table holds only udpdwell's own
 * two legacy reasons and from_btf is false. -1 on allocation failure.
 */
int ud_reasons_load(struct ud_reasons *r, const struct btf *btf);
void ud_reasons_free(struct ud_reasons *r);

/* the short name, or "REASON_<n>" for a value the enum does not have */
const char *ud_reason_name(const struct ud_reasons *r, uint32_t value, char *buf, size_t len);
/* the value of a short name ("SOCKET_RCVBUFF"); false when unknown */
bool ud_reason_value(const struct ud_reasons *r, const char *name, uint32_t *value);

#endif
