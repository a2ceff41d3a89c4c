// SPDX-License-Identifier: GPL-2.0-only
/*
 * quickack's command line: what each form means, and what is refused. A
 * refused command line exits 2 with one line (lib/opt.h), and --help and
 * --version exit 0: those run in a child process, whose exit status and
 * output are checked.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "tk_assert.h"

#include "log.h"
#include "quickack/quickack.h"

/* a command line's exit status when it is not refused: none of lib/common.h's */
#define PARSED 100

static struct qa_args a;

/* parse a command line given as one string (words split on spaces) */
static void parse(const char *line)
{
	static char buf[512];
	static char *argv[32];
	int argc = 0;

	snprintf(buf, sizeof(buf), "quickack %s", line);
	for (char *t = strtok(buf, " "); t && argc < 31; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	qa_args_parse(argc, argv, &a);
}

struct child {
	int status;
	char out[16384], err[1024];
};

static void read_all(int fd, char *buf, size_t cap)
{
	size_t n = 0;
	ssize_t r;

	while (n + 1 < cap && (r = read(fd, buf + n, cap - 1 - n)) > 0)
		n += (size_t)r;
	buf[n] = '\0';
	close(fd);
}

/* parse line in a child: its exit status, stdout and stderr */
static void run_child(const char *line, struct child *ch)
{
	int out[2], err[2], st;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	assert_int_equal(pipe(out), 0);
	assert_int_equal(pipe(err), 0);
	pid = fork();
	tk_assert_cmp(pid, >=, 0);
	if (pid == 0) {
		dup2(out[1], STDOUT_FILENO);
		dup2(err[1], STDERR_FILENO);
		close(out[0]);
		close(err[0]);
		log_set_level(LOG_NORMAL);
		parse(line);
		fflush(stdout);
		_exit(PARSED);
	}
	close(out[1]);
	close(err[1]);
	read_all(out[0], ch->out, sizeof(ch->out));
	read_all(err[0], ch->err, sizeof(ch->err));
	assert_int_equal(waitpid(pid, &st, 0), pid);
	ch->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* line is refused with exactly this one line, and exit status 2 */
static void refused(const char *line, const char *msg)
{
	struct child ch;
	char want[512];

	run_child(line, &ch);
	snprintf(want, sizeof(want), "quickack: %s\n", msg);
	if (ch.status != TK_EXIT_USAGE || strcmp(ch.err, want)) {
		print_error("'%s': exit %d, stderr '%s'; want exit 2, '%s'", line, ch.status, ch.err, want);
		fail();
	}
}

static int setup(void **state)
{
	(void)state;
	log_set_level(LOG_NORMAL);
	return 0;
}

static void test_commands(void **state)
{
	(void)state;
	parse("show");
	assert_int_equal(a.cmd, QA_SHOW);
	assert_false(a.has_prefix);
	assert_int_equal(a.family, 0);
	assert_null(a.table);
	assert_false(a.fmt_set);

	parse("on 10.0.1.0/24");
	assert_int_equal(a.cmd, QA_ON);
	assert_true(a.has_prefix);
	assert_int_equal(a.family, AF_INET);
	assert_int_equal(a.prefix.len, 24);
	assert_int_equal(a.change.op, QA_OP_QUICKACK);
	assert_int_equal(a.change.value, 1);
	assert_false(a.change_records);

	parse("off fd00:1::/64 --table 100 --dev d0 --netns rp-recv --journal /x/j");
	assert_int_equal(a.cmd, QA_OFF);
	assert_int_equal(a.family, AF_INET6);
	assert_int_equal(a.change.value, 0);
	assert_string_equal(a.table, "100");
	assert_string_equal(a.dev, "d0");
	assert_string_equal(a.dev_opt, "--dev");
	assert_string_equal(a.netns, "rp-recv");
	assert_string_equal(a.journal, "/x/j");

	/* -i and --interface are --dev; messages name the option as it was given */
	parse("on 10.0.1.0/24 -i d1");
	assert_string_equal(a.dev, "d1");
	assert_string_equal(a.dev_opt, "-i");
	parse("show --interface=d2");
	assert_string_equal(a.dev, "d2");
	assert_string_equal(a.dev_opt, "--interface");

	/* options before the command, too (what scripts write varies) */
	parse("--netns rp-recv on 10.0.1.0/24 --journal /d/quickack.journal");
	assert_int_equal(a.cmd, QA_ON);
	assert_string_equal(a.netns, "rp-recv");
	/* an option's value is not the command, even when it is a command's name */
	parse("--journal show -f csv off 10.0.1.0/24");
	assert_int_equal(a.cmd, QA_OFF);
	assert_string_equal(a.journal, "show");
	assert_int_equal(a.fmt, REC_CSV);

	parse("on --all-dev eth0 -6");
	assert_string_equal(a.all_dev, "eth0");
	assert_false(a.has_prefix);
	assert_int_equal(a.family, AF_INET6);
	parse("on --all-dev eth0 --ipv4");
	assert_int_equal(a.family, AF_INET);

	parse("restore --netns rp-recv --journal /d/j");
	assert_int_equal(a.cmd, QA_RESTORE);
	parse("restore --dry-run");
	assert_true(a.dry_run);
}

/* -f, --json (its alias), -o; -v and -q */
static void test_output_options(void **state)
{
	(void)state;
	parse("status --json");
	assert_int_equal(a.cmd, QA_STATUS);
	assert_true(a.fmt_set);
	assert_int_equal(a.fmt, REC_JSON);
	parse("show --format csv -v -v");
	assert_int_equal(a.fmt, REC_CSV);
	assert_int_equal(log_get_level(), LOG_DEBUG);
	parse("show -q");
	assert_int_equal(log_get_level(), LOG_QUIET);
	log_set_level(LOG_NORMAL);
	/* an alias of -f json: the later one wins, as with any option */
	parse("show --json -f csv");
	assert_int_equal(a.fmt, REC_CSV);
	parse("show -f table --json");
	assert_int_equal(a.fmt, REC_JSON);
	parse("show -o /tmp/routes.json");
	assert_string_equal(a.output, "/tmp/routes.json");
	assert_false(a.fmt_set);
	/* a changing command writes its change records when asked: -f, --json or -o */
	parse("on 10.0.1.0/24 -f table");
	assert_true(a.change_records);
	parse("congctl 10.0.1.0/24 bbr -o /tmp/c");
	assert_true(a.change_records);
	parse("restore --json");
	assert_true(a.change_records);
	parse("restore");
	assert_false(a.change_records);
}

/* --help: the tool's, or the command's own options; -V everywhere */
static void test_help_and_version(void **state)
{
	struct child ch;
	(void)state;

	run_child("--help", &ch);
	assert_int_equal(ch.status, 0);
	assert_non_null(strstr(ch.out, "Usage: quickack COMMAND"));
	assert_non_null(strstr(ch.out, "\n  18  a matching route cannot be changed safely\n"));
	assert_null(strstr(ch.out, "--journal"));
	run_child("show --help", &ch);
	assert_int_equal(ch.status, 0);
	assert_non_null(strstr(ch.out, "Usage: quickack show [PREFIX] [OPTIONS]"));
	assert_non_null(strstr(ch.out, "  -f, --format FMT "));
	assert_null(strstr(ch.out, "--journal"));
	assert_null(strstr(ch.out, "--dry-run"));
	assert_null(strstr(ch.out, "\n  13  ")); /* show matches nothing by name */
	run_child("--netns x congctl -h", &ch);
	assert_int_equal(ch.status, 0);
	assert_non_null(strstr(ch.out, "Usage: quickack congctl PREFIX NAME"));
	assert_non_null(strstr(ch.out, "      --lock "));
	run_child("on --help", &ch);
	assert_null(strstr(ch.out, "--lock"));
	run_child("status --help", &ch);
	assert_null(strstr(ch.out, "--dry-run"));
	assert_null(strstr(ch.out, "--table"));
	for (int c = 0; c < QA_NCMDS; c++) {
		char line[64];

		snprintf(line, sizeof(line), "%s -V", qa_cmd_name((enum qa_cmd)c));
		run_child(line, &ch);
		assert_int_equal(ch.status, 0);
		assert_int_equal(strncmp(ch.out, "quickack ", 9), 0);
		assert_ptr_equal(strchr(ch.out, '\n'), ch.out + strlen(ch.out) - 1);
	}
	run_child("--version", &ch);
	assert_int_equal(ch.status, 0);
}

static void test_prefixes(void **state)
{
	uint8_t zero[16] = { 0 };
	(void)state;
	parse("on default");
	assert_int_equal(a.prefix.addr.family, AF_INET);
	assert_int_equal(a.prefix.len, 0);
	parse("on default -6");
	assert_int_equal(a.prefix.addr.family, AF_INET6);
	assert_memory_equal(a.prefix.addr.bytes, zero, 16);
	parse("on 10.0.1.1");
	assert_int_equal(a.prefix.len, 32);
	parse("on 10.0.1.0/24 --via 10.9.0.1");
	assert_true(a.has_via);
	refused("on 10.0.1.300/24", "prefix: '10.0.1.300' is not an IPv4 or IPv6 address");
	refused("on 10.0.1.1/24", "prefix: '10.0.1.1/24' has host bits set beyond /24");
	refused("on 10.0.1.0/33", "prefix: 33 is out of range 0..32");
	refused("on fd00::/64 -4", "prefix: 'fd00::/64' is not IPv4 (-4)");
	refused("on 10.0.0.0/8 -6", "prefix: '10.0.0.0/8' is not IPv6 (-6)");
	refused("on 10.0.1.0/24 --via fd00::1", "--via: fd00::1 is not of the prefix's family (IPv4)");
	refused("on 10.0.1.0/24 --via 10.9.0", "--via: '10.9.0' is not an IPv4 or IPv6 address");
}

static void test_values(void **state)
{
	uint32_t ms;
	char cc[QA_CC_NAME_MAX];
	(void)state;
	parse("rto-min 10.0.1.0/24 5");
	assert_int_equal(a.change.op, QA_OP_RTO_MIN);
	assert_int_equal(a.change.value, 5);
	assert_int_equal(qa_parse_rto_min("x", "5ms", &ms), 0);
	assert_int_equal(ms, 5);
	assert_int_equal(qa_parse_rto_min("x", "2s", &ms), 0);
	assert_int_equal(ms, 2000);
	assert_int_equal(qa_parse_rto_min("x", "off", &ms), 0);
	assert_int_equal(ms, 0);
	assert_int_equal(qa_parse_rto_min("x", "120000ms", &ms), 0);
	log_set_level(LOG_QUIET - 1); /* keep the expected errors out of the TAP stream */
	assert_int_equal(qa_parse_rto_min("x", "120001", &ms), -1);
	assert_int_equal(qa_parse_rto_min("x", "0", &ms), -1);
	assert_int_equal(qa_parse_rto_min("x", "5x", &ms), -1);
	assert_int_equal(qa_parse_rto_min("x", "5us", &ms), -1);
	assert_int_equal(qa_parse_rto_min("x", "-5", &ms), -1);
	assert_int_equal(qa_parse_rto_min("x", "ms", &ms), -1);
	assert_int_equal(qa_parse_rto_min("x", "", &ms), -1);
	assert_int_equal(qa_parse_rto_min("x", "1.5s", &ms), -1);
	assert_int_equal(qa_parse_congctl("x", "0123456789abcdef", cc), -1);
	assert_int_equal(qa_parse_congctl("x", "bbr traced", cc), -1);
	assert_int_equal(qa_parse_congctl("x", "", cc), -1);
	log_set_level(LOG_NORMAL);

	parse("congctl 10.0.1.0/24 bbr_traced --lock");
	assert_int_equal(a.change.op, QA_OP_CONGCTL);
	assert_string_equal(a.change.cc, "bbr_traced");
	assert_true(a.change.lock);
	parse("congctl --all-dev d0 off");
	assert_string_equal(a.change.cc, "");
	assert_int_equal(qa_parse_congctl("x", "0123456789abcde", cc), 0);
	refused("rto-min 10.0.1.0/24 121s", "rto-min: 121 is out of range 1..120");
	refused("rto-min 10.0.1.0/24 5x", "rto-min: '5x' is not a time (N, Nms or Ns; or off)");
	refused("congctl 10.0.1.0/24 bbr;x",
		"congctl: 'bbr;x' is not a congestion control name (letters, digits, '_' and '-')");
}

static void test_operands_refused(void **state)
{
	(void)state;
	refused("", "missing command: show, on, off, rto-min, congctl, nodelay, restore or status (see --help)");
	refused("-v", "missing command: show, on, off, rto-min, congctl, nodelay, restore or status (see --help)");
	refused("frob", "command: 'frob' is not one of show|on|off|rto-min|congctl|nodelay|restore|status");
	refused("on", "on: missing PREFIX (or --to ADDR, or --all-dev DEV)");
	refused("on 10.0.1.0/24 10.0.2.0/24", "on: unexpected argument '10.0.2.0/24'");
	refused("on 10.0.1.0/24 --all-dev d0", "on: a PREFIX ('10.0.1.0/24') and --all-dev exclude each other");
	refused("on --all-dev d0 --dev d1", "--all-dev and --dev exclude each other");
	refused("on --all-dev d0 -i d1", "--all-dev and -i exclude each other");
	refused("rto-min 10.0.1.0/24", "rto-min: missing VALUE (N, Nms or Ns; or off)");
	refused("congctl 10.0.1.0/24", "congctl: missing NAME (a congestion control, or off)");
	refused("rto-min --all-dev d0 5 6", "rto-min: a PREFIX ('5') and --all-dev exclude each other");
	refused("restore 10.0.1.0/24", "restore: unexpected argument '10.0.1.0/24'");
	refused("on 10.0.1.0/24 -4 -6", "-4 and -6 exclude each other");
}

/* options a command does not have, and the values its options refuse */
static void test_options_refused(void **state)
{
	(void)state;
	refused("show --all-dev d0", "unknown option '--all-dev' (see --help)");
	refused("show --dry-run", "unknown option '--dry-run' (see --help)");
	refused("show --journal /x", "unknown option '--journal' (see --help)");
	refused("status --dry-run", "unknown option '--dry-run' (see --help)");
	refused("restore --table 100", "unknown option '--table' (see --help)");
	refused("on 10.0.1.0/24 --lock", "unknown option '--lock' (see --help)");
	refused("on 10.0.1.0/24 --bogus", "unknown option '--bogus' (see --help)");
	refused("on 10.0.1.0/24 -x", "unknown option '-x' (see --help)");
	refused("on 10.0.1.0/24 --dev", "--dev needs a value (see --help)");
	refused("show -f", "-f needs a value (see --help)");
	refused("congctl 10.0.1.0/24 bbr --lock=1", "--lock takes no value (see --help)");
	refused("on 10.0.1.0/24 --table 4294967296", "--table: 4294967296 is out of range 1..4294967295");
	refused("on 10.0.1.0/24 --dev a/b", "--dev: 'a/b' is not a device name (no '/', ':' or spaces)");
	refused("on 10.0.1.0/24 -i 0123456789abcdef", "-i: '0123456789abcdef' is not a device name (1 to 15 characters)");
	refused("on 10.0.1.0/24 --netns ..",
		"--netns: network namespace name '..' is not a plain name (no '/', not '.' or '..')");
	refused("on 10.0.1.0/24 --netns a/b",
		"--netns: network namespace name 'a/b' is not a plain name (no '/', not '.' or '..')");
	refused("show --format yaml", "--format: 'yaml' is not one of table|csv|json");
	refused("restore --journal=", "--journal: the path is empty");
}

/* the socket scopes' command lines: what they hold, and what they refuse */
static void test_scopes(void **state)
{
	(void)state;
	parse("on --port 1935");
	assert_int_equal(a.cmd, QA_ON);
	assert_true(a.scope);
	assert_false(a.has_prefix);
	assert_int_equal(a.nports, 1);
	assert_int_equal(a.ports[0], 1935);
	assert_null(a.cgroup);
	parse("nodelay --dport 1935,443,8080 --cgroup /sys/fs/cgroup/x --netns ns1");
	assert_int_equal(a.cmd, QA_NODELAY);
	assert_int_equal(a.nports, 3);
	assert_int_equal(a.ports[2], 8080);
	assert_string_equal(a.cgroup, "/sys/fs/cgroup/x");
	parse("on --port 65535,1");
	assert_int_equal(a.ports[0], 65535);
	refused("nodelay", "nodelay: missing --dport PORTS (the remote ports of the connections to set)");
	refused("on --port 0", "--port: port '0' is out of range (1 to 65535)");
	refused("on --port 65536", "--port: port '65536' is out of range (1 to 65535)");
	refused("on --port 99999999999999999999", "--port: port '99999999999999999999' is out of range (1 to 65535)");
	refused("on --port 1935,1935", "--port: port 1935 is named twice");
	refused("on --port 1,2,3,4,5,6,7,8,9", "--port: at most 8 ports");
	refused("on --port 1935,", "--port: '1935,' is not a port or a list of ports (1935, or 1935,8080)");
	refused("on --port ,1935", "--port: ',1935' is not a port or a list of ports (1935, or 1935,8080)");
	refused("on --port x", "--port: 'x' is not a port or a list of ports (1935, or 1935,8080)");
	refused("on --port 19x5", "--port: '19x5' is not a port or a list of ports (1935, or 1935,8080)");
	refused("on --port 1935 10.0.1.0/24",
		"on: a PREFIX ('10.0.1.0/24') and --port exclude each other: --port is a socket scope, not a route");
	refused("on --port 1935 --to 10.0.1.2", "--to selects routes; --port is a socket scope, which changes no route");
	refused("on --port 1935 -i d0", "-i selects routes; --port is a socket scope, which changes no route");
	refused("on --port 1935 --table 100", "--table selects routes; --port is a socket scope, which changes no route");
	refused("on 10.0.1.0/24 --cgroup /x", "--cgroup needs a socket scope (on --port PORTS, or nodelay --dport PORTS)");
	refused("off --port 1935", "unknown option '--port' (see --help)");
	refused("nodelay --port 1935", "unknown option '--port' (see --help)");
	refused("on --dport 1935", "unknown option '--dport' (see --help)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_commands, setup),
		cmocka_unit_test_setup(test_output_options, setup),
		cmocka_unit_test_setup(test_help_and_version, setup),
		cmocka_unit_test_setup(test_prefixes, setup),
		cmocka_unit_test_setup(test_values, setup),
		cmocka_unit_test_setup(test_operands_refused, setup),
		cmocka_unit_test_setup(test_options_refused, setup),
		cmocka_unit_test_setup(test_scopes, setup),
	};

	log_init("quickack");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
