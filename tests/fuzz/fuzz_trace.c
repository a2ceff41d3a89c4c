// SPDX-License-Identifier: GPL-2.0-only
/*
 * Trace files come from users: the JSON-lines reader and the trace's record
 * readers (lib/trace.h, what bbrpcap join and bbrplot read traces with) on
 * arbitrary bytes, lines cut anywhere. Beyond not crashing: a line the
 * reader accepts as a sample or collapse reads back the same way when the
 * record is written again and reread (the writer and the readers agree on
 * whatever the reader took).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonl.h"
#include "record.h"
#include "trace.h"

/* writes the sample (or collapse) and reads it back: the same struct */
static void round_trip(const struct bt_collapse *c, bool is_sample)
{
	char *buf = NULL, err[64];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct rec_writer *w = rec_writer_new(REC_JSON, f);
	struct bt_collapse back;
	struct bt_fieldset fs;
	struct jl_obj o;

	if (!f || !w)
		abort();
	if (is_sample)
		bt_sample_write(w, &c->ack, 0);
	else
		bt_collapse_write(w, c, 0);
	rec_writer_free(w);
	fclose(f);
	if (jl_parse(buf, &o, err, sizeof(err)))
		abort(); /* the writer wrote what the reader refuses */
	if (is_sample)
		bt_sample_read(&o, &back.ack, &fs);
	else
		bt_collapse_read(&o, &back, &fs);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy = malloc(size + 1), *line, *save = NULL, err[96];
	struct jl_obj o;

	if (!copy)
		abort();
	memcpy(copy, data, size);
	copy[size] = '\0';
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct bt_collapse c;
		struct bt_fieldset fs;
		const char *type;

		if (jl_parse(line, &o, err, sizeof(err)))
			continue;
		type = bt_record_type(&o);
		memset(&c, 0, sizeof(c));
		if (type && !strcmp(type, "sample")) {
			bt_sample_read(&o, &c.ack, &fs);
			round_trip(&c, true);
		} else if (type && !strcmp(type, "collapse")) {
			bt_collapse_read(&o, &c, &fs);
			round_trip(&c, false);
		}
	}
	free(copy);
	return 0;
}
