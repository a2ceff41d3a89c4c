// SPDX-License-Identifier: GPL-2.0-only
/*
 * upfbench: how many cycles per packet does a GTP-U user-plane path cost,
 * and which design removes the cache misses?
 */
#include "log.h"

#include "args.h"
#include "cmd.h"

static int (*const commands[UP_NCMDS])(struct up_args *a) = {
	[UP_CMD_RUN] = up_cmd_run,
	[UP_CMD_SWEEP] = up_cmd_sweep,
	[UP_CMD_LOOKUP] = up_cmd_lookup,
	[UP_CMD_FLOOR] = up_cmd_floor,
	[UP_CMD_DECODE] = up_cmd_decode,
	[UP_CMD_IDENTITY] = up_cmd_check_identity,
};

int main(int argc, char **argv)
{
	struct up_args a;

	log_init(argv[0]);
	up_notes = stderr;
	up_args_parse(&a, argc, argv);
	return commands[a.cmd](&a);
}
