// SPDX-License-Identifier: GPL-2.0-only
/*
 * bbrpcap: what the wire showed. Flows, throughput with its dips, the ACK
 * stream, and the frame behind every BBR sample. This file finds the
 * command; each command reads its own options.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "common.h"
#include "log.h"
#include "opt.h"
#include "pcap/bbrpcap.h"

static const struct command {
	const char *name;
	const char *args;    /* after the name in --help */
	const char *what;    /* each '\n' starts an indented line */
	int (*run)(int argc, char **argv);
} commands[] = {
	{ "capture", "-i IFACE -w FILE", "live capture of chosen flows (libpcap, kernel BPF\n"
					  "filter, headers-only snaplen, ring of files)", bp_capture_main },
	{ "flows", "FILE...", "TCP flows: packets, bytes, duration,\n"
			      "mean throughput", bp_flows_main },
	{ "throughput", "FILE...", "throughput per flow, direction and time bin, from\n"
				"data sent and from bytes ACKed, with dips marked", bp_throughput_main },
	{ "acks", "FILE...", "the ACK stream: delay after the\n"
			  "newest data each ACK covers, segments\n"
			  "per ACK, delayed-ACK candidates", bp_acks_main },
	{ "gaps", "FILE...", "silences of 100 ms or more: no frame either way,\n"
			  "with what was in flight (idle or unACKed data)", bp_gaps_main },
	{ "join", "TRACE.jsonl FILE...", "the frame of the ACK behind every bbrtrace\n"
				      "sample and collapse", bp_join_main },
};

#define COMMAND_COL 29 /* where a command's description starts in --help */

static void list_commands(FILE *f)
{
	fputs("Commands:\n", f);
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++) {
		int n = fprintf(f, "  %s %s", commands[i].name, commands[i].args);

		fprintf(f, "%*s", n < COMMAND_COL ? COMMAND_COL - n : 1, "");
		for (const char *p = commands[i].what; *p; p++) {
			fputc(*p, f);
			if (*p == '\n')
				fprintf(f, "%*s", COMMAND_COL, "");
		}
		fputc('\n', f);
	}
}

static void top_footer(FILE *f)
{
	fputs("\n", f);
	list_commands(f);
	fputs("Each command takes its own options (bbrpcap COMMAND --help).\n"
	      "\n"
	      "FILE is pcap or pcapng (any byte order, us or ns timestamps; \"-\" reads stdin).\n"
	      "Several FILEs (a ring of files) are read as one capture, in time order.\n"
	      "Link types: Ethernet with or without 802.1Q/802.1ad tags, Linux cooked SLL\n"
	      "and SLL2, raw IPv4/IPv6, BSD loopback. Payload sizes come from the IP header,\n"
	      "so headers-only captures (small snaplen) and TSO/GRO super-segments count right.\n",
	      f);
	fputs(bp_units_help, f);
}

static const struct opt top_opts[] = {
	OPT_E_STANDARD,
	OPT_E_END,
};

/* the codes of every command */
static const int exit_codes[] = { TK_EXIT_OK, TK_EXIT_FAIL, TK_EXIT_USAGE, TK_EXIT_NOPERM, TK_EXIT_DATA,
				  TK_EXIT_NODEV, TK_EXIT_UNMATCHED, -1 };
static const struct opt_cli cli = {
	"Usage: bbrpcap [OPTIONS] COMMAND [OPTIONS] ...\n"
	"What the wire showed: TCP flows, throughput and its dips, the ACK stream, and\n"
	"the capture frame behind every bbrtrace sample.\n"
	"\n",
	top_opts, NULL, top_footer, exit_codes,
};

/* "capture, flows, ..." */
static const char *command_names(char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(commands) && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "", commands[i].name);
	return buf;
}

int main(int argc, char **argv)
{
	char names[128];

	log_init("bbrpcap");
	/* bbrpcap's own options come before the command: one at a time, so
	 * that the command's options are left to it */
	while (argc > 1 && argv[1][0] == '-' && argv[1][1]) {
		char *one[] = { argv[0], argv[1], NULL };

		opt_parse(&cli, 2, one, NULL);
		argv[1] = argv[0];
		argv++;
		argc--;
	}
	if (argc < 2)
		cli_usage_die("missing a command (%s); see --help", command_names(names, sizeof(names)));
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	cli_usage_die("'%s' is not a command (%s); see --help", argv[1], command_names(names, sizeof(names)));
}
