/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One table per command line. A tool lists its options once, each with its
 * name, its value's kind and range, where the value goes, its default and
 * its help text; opt_parse() parses argv against the table (getopt_long
 * underneath) and opt_usage() prints the options part of --help from the
 * same table, so the two cannot disagree.
 *
 * Every tool refuses a bad command line the same way: one line naming the
 * option and the reason, with "(see --help)", and exit status 2:
 *   tool: unknown option '--bogus' (see --help)
 *   tool: --duration needs a value (see --help)
 *   tool: --once takes no value (see --help)
 *   tool: --dport: 70000 is out of range 0..65535
 * The values themselves are parsed by lib/cli.h's strict parsers.
 *
 * The options every tool shares, and their meaning across the toolkit (the
 * README's dialect table), come from the OPT_* macros below.
 */
#ifndef TK_OPT_H
#define TK_OPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum opt_kind {
	OPT_FLAG,      /* bool = true */
	OPT_UNFLAG,    /* bool = false (--no-...) */
	OPT_STR,       /* const char * = the value as given */
	OPT_U64,       /* uint64_t within [min, max] */
	OPT_U32,       /* uint32_t within [min, max] */
	OPT_DOUBLE,    /* double within [min, max] */
	OPT_SECONDS,   /* double: seconds, decimals allowed, within [min, max] */
	OPT_PORT,      /* uint16_t port, 0..65535 */
	OPT_ENDPOINT,  /* const char * = the value, an ADDR:PORT to listen on (cli_parse_endpoint) */
	OPT_CHOICE,    /* int: the value's index in choices */
	OPT_FORMAT,    /* enum rec_format, and true at off_given */
	OPT_CALL,      /* the tool's own function parses it */
	OPT_HELP,      /* print the usage and exit 0 */
	OPT_VERSION,   /* print "tool VERSION" and exit 0 */
	OPT_VERBOSE,   /* one more level of detail on stderr (repeatable) */
	OPT_QUIET,     /* errors (and verdicts) only */
};

struct opt {
	const char *name;           /* long name, without "--" */
	int letter;                 /* short option, 0 for none */
	enum opt_kind kind;
	const char *arg;            /* the value's name in --help ("SECONDS"); NULL: takes none */
	const char *help;           /* --help's text; each '\n' starts an indented line */
	size_t off;                 /* where the value goes in the tool's settings */
	double min, max;            /* numbers: the range accepted */
	const char *const *choices; /* OPT_CHOICE: NULL-terminated */
	/* OPT_CALL: parse val (NULL for an option without a value) into cfg;
	 * 0, or -1 after printing one line with elog() */
	int (*call)(void *cfg, const char *opt, const char *val);
	size_t off_given;           /* OPT_FORMAT: a bool set when the option is given */
	/* the value may be left out ("--x"): then it is "--x=V", or the next
	 * argument when that does not start with '-' ("--x V"), or NULL */
	bool optional;
	/* the value when the option is not given, written once: opt_parse()
	 * applies it before the command line, as if given (so it passes the
	 * same range checks), and --help ends the option's text with
	 * "(default DEF)". NULL: the option has no value by default, or its
	 * default is no value (the text says which: "default: until Ctrl-C") */
	const char *def;
};

/* a command line: the text before the options in --help, the options
 * (ending with an entry whose name is NULL), the text after them (a string,
 * then a function for text built from constants), and the exit codes the
 * command uses (lib/common.h's, ending with -1), listed last */
struct opt_cli {
	const char *synopsis;
	const struct opt *opts;
	const char *footer;
	void (*footer_fn)(FILE *f);
	const int *exits;
};

/*
 * Parses argv[1..] into cfg, in order (a later option overrides an earlier
 * one). Options and arguments may come in any order, as with getopt_long;
 * "--" ends the options. Returns the index of the first argument that is
 * not an option, after getopt has moved them to the end. Exits 2 with one
 * line on a bad command line, 0 after --help and --version.
 */
int opt_parse(const struct opt_cli *cli, int argc, char **argv, void *cfg);
/*
 * For a tool with commands, each with its own table: the index in argv of
 * the first operand (the command's name), where options of any of the n
 * tables may come before it; argc when there is none. It applies nothing
 * and prints nothing: the command's own opt_parse() judges every option.
 */
int opt_first_operand(const struct opt_cli *const *clis, size_t n, int argc, char **argv);
/* the synopsis, the options, the footer and the exit codes */
void opt_usage(const struct opt_cli *cli, FILE *f);
/* "Exit status:" and one line per code, in the table's words */
void opt_exit_codes(FILE *f, const int *codes);

/* --- table entries; TK_OPT_CFG names the tool's settings struct ------------------ */
#define OPT_AT(field) offsetof(TK_OPT_CFG, field)
#define OPT_E_FLAG(name, letter, field, help) { name, letter, OPT_FLAG, NULL, help, OPT_AT(field) }
#define OPT_E_UNFLAG(name, letter, field, help) { name, letter, OPT_UNFLAG, NULL, help, OPT_AT(field) }
#define OPT_E_STR(name, letter, arg, field, help) { name, letter, OPT_STR, arg, help, OPT_AT(field) }
#define OPT_E_U64(name, letter, arg, field, min, max, help) \
	{ name, letter, OPT_U64, arg, help, OPT_AT(field), min, max }
#define OPT_E_U32(name, letter, arg, field, min, max, help) \
	{ name, letter, OPT_U32, arg, help, OPT_AT(field), min, max }
#define OPT_E_DOUBLE(name, letter, arg, field, min, max, help) \
	{ name, letter, OPT_DOUBLE, arg, help, OPT_AT(field), min, max }
#define OPT_E_PORT(name, letter, arg, field, help) { name, letter, OPT_PORT, arg, help, OPT_AT(field) }
#define OPT_E_ENDPOINT(name, letter, field, help) { name, letter, OPT_ENDPOINT, "ADDR:PORT", help, OPT_AT(field) }
#define OPT_E_CHOICE(name, letter, arg, field, choices, help) \
	{ name, letter, OPT_CHOICE, arg, help, OPT_AT(field), 0, 0, choices }
#define OPT_E_CALL(name, letter, arg, fn, help) { name, letter, OPT_CALL, arg, help, 0, 0, 0, NULL, fn }
/* the same with a value that may be left out: --help shows "--name [ARG]" */
#define OPT_E_CALL_OPTIONAL(name, letter, arg, fn, help) \
	{ name, letter, OPT_CALL, arg, help, 0, 0, 0, NULL, fn, 0, true }
/* the same with a default value (struct opt's def), a string as on the command line */
#define OPT_E_U64_D(name, letter, arg, field, min, max, dflt, help) \
	{ name, letter, OPT_U64, arg, help, OPT_AT(field), min, max, .def = dflt }
#define OPT_E_U32_D(name, letter, arg, field, min, max, dflt, help) \
	{ name, letter, OPT_U32, arg, help, OPT_AT(field), min, max, .def = dflt }
#define OPT_E_DOUBLE_D(name, letter, arg, field, min, max, dflt, help) \
	{ name, letter, OPT_DOUBLE, arg, help, OPT_AT(field), min, max, .def = dflt }
#define OPT_E_CHOICE_D(name, letter, arg, field, choices, dflt, help) \
	{ name, letter, OPT_CHOICE, arg, help, OPT_AT(field), 0, 0, choices, .def = dflt }
#define OPT_E_CALL_D(name, letter, arg, fn, dflt, help) \
	{ name, letter, OPT_CALL, arg, help, 0, 0, 0, NULL, fn, .def = dflt }

/* the shared options, with the same letters and meanings in every tool */
#define OPT_E_OUTPUT(field, help) OPT_E_STR("output", 'o', "FILE", field, help)
#define OPT_E_DURATION(field, help) \
	{ "duration", 'd', OPT_SECONDS, "SECONDS", help, OPT_AT(field), 0.001, 31536000 }
#define OPT_E_DURATION_D(field, dflt, help) \
	{ "duration", 'd', OPT_SECONDS, "SECONDS", help, OPT_AT(field), 0.001, 31536000, .def = dflt }
/* fmt_field is an enum rec_format; given_field a bool, true when -f was given */
#define OPT_E_FORMAT(fmt_field, given_field) \
	{ "format", 'f', OPT_FORMAT, "FMT", "table, csv or json (JSON lines); default: table on a\n" \
	  "terminal, json otherwise", OPT_AT(fmt_field), 0, 0, NULL, NULL, OPT_AT(given_field) }
#define OPT_E_STANDARD                                                                       \
	{ "quiet", 'q', OPT_QUIET, NULL, "errors only on stderr" },                           \
	{ "verbose", 'v', OPT_VERBOSE, NULL, "more detail on stderr (-vv: debugging output)" }, \
	{ "help", 'h', OPT_HELP, NULL, "this help" },                                         \
	{ "version", 'V', OPT_VERSION, NULL, "print the version" }
#define OPT_E_END { NULL }

#endif
