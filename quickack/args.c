// SPDX-License-Identifier: GPL-2.0-only
/*
 * quickack's command lines: one table of options per command (lib/opt.h),
 * the command's operands, and what the options say together.
 */
#include <ctype.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "journal.h"
#include "log.h"
#include "netns.h"
#include "opt.h"
#include "sockscope.h"
#include "quickack.h"

/* the kernel's TCP_RTO_MAX (include/net/tcp.h): the largest rto_min it accepts */
#define QA_RTO_MIN_MAX_S 120
#define QA_STR_(x) #x
#define QA_STR(x) QA_STR_(x)

static const char *const cmd_names[] = { "show", "on", "off", "rto-min", "congctl", "nodelay", "restore", "status",
					  NULL };

const char *qa_cmd_name(enum qa_cmd c)
{
	return cmd_names[c];
}

/* --- values ------------------------------------------------------------------------ */

int qa_parse_rto_min(const char *opt, const char *s, uint32_t *ms)
{
	char num[24];
	size_t n;
	uint32_t v, mult = 1;

	if (s && !strcmp(s, "off")) {
		*ms = 0;
		return 0;
	}
	n = s ? strlen(s) : 0;
	if (n > 2 && !strcmp(s + n - 2, "ms"))
		n -= 2;
	else if (n > 1 && s[n - 1] == 's') {
		n -= 1;
		mult = TK_MSEC_PER_SEC;
	}
	if (!n || n >= sizeof(num)) {
		elog("%s: '%s' is not a time (N, Nms or Ns; or off)", opt, s ? s : "");
		return -1;
	}
	memcpy(num, s, n);
	num[n] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (!isdigit((unsigned char)num[i])) {
			elog("%s: '%s' is not a time (N, Nms or Ns; or off)", opt, s);
			return -1;
		}
	}
	if (cli_parse_u32(opt, num, 1, QA_RTO_MIN_MAX_S * TK_MSEC_PER_SEC / mult, &v))
		return -1;
	*ms = v * mult;
	return 0;
}

int qa_parse_congctl(const char *opt, const char *s, char out[QA_CC_NAME_MAX])
{
	size_t n = s ? strlen(s) : 0;

	memset(out, 0, QA_CC_NAME_MAX);
	if (s && !strcmp(s, "off"))
		return 0;
	if (!n || n >= QA_CC_NAME_MAX) {
		elog("%s: '%s' is not a congestion control name (1 to %d characters)", opt, s ? s : "",
		     QA_CC_NAME_MAX - 1);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-') {
			elog("%s: '%s' is not a congestion control name (letters, digits, '_' and '-')", opt, s);
			return -1;
		}
	}
	memcpy(out, s, n);
	return 0;
}

/* what the kernel accepts as an interface name (dev_valid_name) */
int qa_parse_ports(const char *opt, const char *s, uint16_t *ports, unsigned int *n)
{
	const char *p = s;

	*n = 0;
	do {
		char *end;
		long v;

		if (*p < '0' || *p > '9')
			goto bad;
		errno = 0;
		v = strtol(p, &end, 10);
		if (errno || v < 1 || v > 65535) {
			elog("%s: port '%.*s' is out of range (1 to 65535)", opt, (int)strcspn(p, ","), p);
			return -1;
		}
		if (*end && *end != ',')
			goto bad;
		for (unsigned int i = 0; i < *n; i++)
			if (ports[i] == v) {
				elog("%s: port %ld is named twice", opt, v);
				return -1;
			}
		if (*n == QS_PORTS_MAX) {
			elog("%s: at most %d ports", opt, QS_PORTS_MAX);
			return -1;
		}
		ports[(*n)++] = (uint16_t)v;
		p = *end ? end + 1 : end;
		if (*end && !*p)
			goto bad;
	} while (*p);
	return 0;
bad:
	elog("%s: '%s' is not a port or a list of ports (1935, or 1935,8080)", opt, s);
	return -1;
}

static int parse_dev(const char *opt, const char *s)
{
	size_t n = strlen(s);

	if (!n || n >= IFNAMSIZ || !strcmp(s, ".") || !strcmp(s, "..")) {
		elog("%s: '%s' is not a device name (1 to %d characters)", opt, s, IFNAMSIZ - 1);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '/' || s[i] == ':' || isspace((unsigned char)s[i])) {
			elog("%s: '%s' is not a device name (no '/', ':' or spaces)", opt, s);
			return -1;
		}
	}
	return 0;
}

static int parse_prefix(const char *s, int family, struct cli_prefix *p)
{
	if (!strcmp(s, "default")) {
		memset(p, 0, sizeof(*p));
		p->addr.family = family == AF_INET6 ? AF_INET6 : AF_INET;
		return 0;
	}
	return cli_parse_prefix("prefix", s, p);
}

/* --- options that parse their own values ---------------------------------------------- */

static int set_dev(void *cfg, const char *opt, const char *val)
{
	struct qa_args *a = cfg;

	if (parse_dev(opt, val))
		return -1;
	a->dev = val;
	snprintf(a->dev_opt, sizeof(a->dev_opt), "%s", opt);
	return 0;
}

/* a number out of range is a bad command line; a name is looked up where it is used */
static int set_table(void *cfg, const char *opt, const char *val)
{
	struct qa_args *a = cfg;
	uint32_t id;

	if (qa_table_parse(val, &id) == -2) {
		elog("%s: %s is out of range 1..%u", opt, val, UINT32_MAX);
		return -1;
	}
	a->table = val;
	return 0;
}

static int set_all_dev(void *cfg, const char *opt, const char *val)
{
	struct qa_args *a = cfg;

	if (parse_dev(opt, val))
		return -1;
	a->all_dev = val;
	return 0;
}

static int set_via(void *cfg, const char *opt, const char *val)
{
	struct qa_args *a = cfg;

	if (cli_parse_addr(opt, val, &a->via))
		return -1;
	a->has_via = true;
	a->via_text = val;
	return 0;
}

static int set_to(void *cfg, const char *opt, const char *val)
{
	struct qa_args *a = cfg;

	if (cli_parse_addr(opt, val, &a->to))
		return -1;
	a->has_to = true;
	a->to_text = val;
	return 0;
}

static int set_netns(void *cfg, const char *opt, const char *val)
{
	struct qa_args *a = cfg;
	char msg[256];

	if (netns_check_name(val, msg, sizeof(msg))) {
		elog("%s: %s", opt, msg);
		return -1;
	}
	a->netns = val;
	return 0;
}

static int set_journal(void *cfg, const char *opt, const char *val)
{
	struct qa_args *a = cfg;

	if (!*val) {
		elog("%s: the path is empty", opt);
		return -1;
	}
	a->journal = val;
	return 0;
}

/* --port (on) and --dport (nodelay): the socket scope's ports */
static int set_ports(void *cfg, const char *opt, const char *val)
{
	struct qa_args *a = cfg;

	if (qa_parse_ports(opt, val, a->ports, &a->nports))
		return -1;
	a->scope = true;
	return 0;
}

static int set_cgroup(void *cfg, const char *opt, const char *val)
{
	struct qa_args *a = cfg;

	(void)opt;
	a->cgroup = val;
	return 0;
}

/* --json: an alias of -f json, kept for the scripts that use it */
static int set_json(void *cfg, const char *opt, const char *val)
{
	struct qa_args *a = cfg;

	(void)opt;
	(void)val;
	a->fmt = REC_JSON;
	a->fmt_set = true;
	return 0;
}

/* --- the tables: each option defined once, each command listing its own ------------------ */

#define TK_OPT_CFG struct qa_args
#define O_TABLE OPT_E_CALL("table", 0, "T", set_table, "routing table: main (default), local, default, a\n" \
					    "number, a name from /etc/iproute2/rt_tables, or all")
#define O_INTERFACE OPT_E_CALL("interface", 'i', "IFACE", set_dev, \
			       "only routes through interface IFACE (any of their\nnexthops)")
#define O_DEV OPT_E_CALL("dev", 0, "IFACE", set_dev, "the same as --interface (ip route's word)")
#define O_VIA OPT_E_CALL("via", 0, "GW", set_via, "only routes through gateway GW")
#define O_IPV4 OPT_E_FLAG("ipv4", '4', ipv4, "only IPv4 routes (default: both, or the PREFIX's)")
#define O_IPV6 OPT_E_FLAG("ipv6", '6', ipv6, "only IPv6 routes")
#define O_SELECT O_TABLE, O_INTERFACE, O_DEV, O_VIA, O_IPV4, O_IPV6
#define O_ALL_DEV OPT_E_CALL("all-dev", 0, "DEV", set_all_dev, "every unicast route through DEV, instead of a PREFIX")
#define O_TO OPT_E_CALL("to", 0, "ADDR", set_to, "the route the kernel would use to reach ADDR (as\n" \
						  "ip route get finds it), instead of a PREFIX;\n"   \
						  "often wider than ADDR (a subnet, the default\n"   \
						  "route): the change reaches every peer it covers")
#define O_HOST OPT_E_FLAG("host", 0, host, "with --to: change a host route for ADDR alone (/32,\n"   \
					   "/128), made as a copy of the route that covers it\n" \
					   "when there is none; restore deletes what it made")
#define O_NETNS OPT_E_CALL("netns", 0, "NS", set_netns, "work in network namespace NS (" NETNS_RUN_DIR "/NS)")
#define O_JOURNAL OPT_E_CALL("journal", 0, "FILE", set_journal,                      \
			     "the journal; default " QAJ_DEFAULT_DIR "/quickack.journal,\n" \
			     "or " QAJ_DEFAULT_DIR "/quickack-NS.journal with --netns NS")
#define O_DRY_RUN OPT_E_FLAG("dry-run", 0, dry_run, "print the netlink requests that would be sent, change\n" \
						     "nothing and write no journal")
#define O_DISCARD_STALE OPT_E_FLAG("discard-stale", 0, discard_stale,                           \
				  "set aside the records of another boot, network\n"            \
				  "namespace or device in a kept file (the journal's\n"         \
				  "path + .stale-TIME), and restore the others")
#define O_LOCK OPT_E_FLAG("lock", 0, lock, "also set the metric's lock bit, so that sockets\n" \
					   "cannot choose another congestion control")
#define O_PORT OPT_E_CALL("port", 0, "PORTS", set_ports,                               \
			  "a socket scope instead of routes: the connections\n"      \
			  "accepted on these local ports (1935, or 1935,8080)\n"      \
			  "ACK within 2 jiffies (8 ms at HZ 250)")
#define O_DPORT OPT_E_CALL("dport", 0, "PORTS", set_ports,                              \
			   "the connections made to these remote ports (1935,\n"     \
			   "or 1935,443)")
#define O_CGROUP OPT_E_CALL("cgroup", 0, "PATH", set_cgroup,                             \
			    "with a socket scope: only the sockets of this cgroup\n" \
			    "v2 directory and those nested in it (default: all)")
#define O_RECORDS                                                         \
	OPT_E_FORMAT(fmt, fmt_set),                                       \
	OPT_E_CALL("json", 0, NULL, set_json, "the same as -f json"),     \
	OPT_E_OUTPUT(output, "write the records to FILE instead of stdout")

static const struct opt tool_opts[] = { OPT_E_STANDARD, OPT_E_END };
static const struct opt show_opts[] = { O_SELECT, O_NETNS, O_RECORDS, OPT_E_STANDARD, OPT_E_END };
static const struct opt change_opts[] = { O_SELECT, O_ALL_DEV, O_TO, O_HOST, O_NETNS, O_JOURNAL, O_DRY_RUN, O_RECORDS,
					  OPT_E_STANDARD, OPT_E_END };
static const struct opt on_opts[] = { O_SELECT, O_ALL_DEV, O_TO, O_HOST, O_PORT, O_CGROUP, O_NETNS, O_JOURNAL, O_DRY_RUN,
				      O_RECORDS, OPT_E_STANDARD, OPT_E_END };
static const struct opt nodelay_opts[] = { O_DPORT, O_CGROUP, O_NETNS, O_JOURNAL, O_DRY_RUN, O_RECORDS, OPT_E_STANDARD,
					   OPT_E_END };
static const struct opt congctl_opts[] = { O_SELECT, O_ALL_DEV, O_TO, O_HOST, O_LOCK, O_NETNS, O_JOURNAL, O_DRY_RUN,
					   O_RECORDS, OPT_E_STANDARD, OPT_E_END };
static const struct opt restore_opts[] = { O_NETNS, O_JOURNAL, O_DISCARD_STALE, O_DRY_RUN, O_RECORDS, OPT_E_STANDARD,
					   OPT_E_END };
static const struct opt status_opts[] = { O_NETNS, O_JOURNAL, O_RECORDS, OPT_E_STANDARD, OPT_E_END };
#undef TK_OPT_CFG

/* the exit codes each command can end with */
static const int show_exits[] = { TK_EXIT_OK, TK_EXIT_FAIL, TK_EXIT_USAGE, TK_EXIT_NOPERM, TK_EXIT_NODEV,
				  TK_EXIT_NOTABLE, TK_EXIT_NONETNS, -1 };
static const int change_exits[] = { TK_EXIT_OK, TK_EXIT_FAIL, TK_EXIT_USAGE, TK_EXIT_NOPERM, TK_EXIT_DATA,
				    TK_EXIT_NODEV, TK_EXIT_NOTABLE, TK_EXIT_NONETNS, TK_EXIT_NOROUTE,
				    TK_EXIT_REFUSED, TK_EXIT_PARTIAL, TK_EXIT_VERIFY, TK_EXIT_JOURNAL,
				    TK_EXIT_UNSAFE, -1 };
static const int scope_exits[] = { TK_EXIT_OK, TK_EXIT_FAIL, TK_EXIT_USAGE, TK_EXIT_NOPERM, TK_EXIT_NOTSUP,
				   TK_EXIT_DATA, TK_EXIT_NONETNS, TK_EXIT_JOURNAL, -1 };
static const int on_exits[] = { TK_EXIT_OK, TK_EXIT_FAIL, TK_EXIT_USAGE, TK_EXIT_NOPERM, TK_EXIT_NOTSUP, TK_EXIT_DATA,
				TK_EXIT_NODEV, TK_EXIT_NOTABLE, TK_EXIT_NONETNS, TK_EXIT_NOROUTE, TK_EXIT_REFUSED,
				TK_EXIT_PARTIAL, TK_EXIT_VERIFY, TK_EXIT_JOURNAL, TK_EXIT_UNSAFE, -1 };
static const int restore_exits[] = { TK_EXIT_OK, TK_EXIT_FAIL, TK_EXIT_USAGE, TK_EXIT_NOPERM, TK_EXIT_DATA,
				     TK_EXIT_NONETNS, TK_EXIT_NOROUTE, TK_EXIT_REFUSED, TK_EXIT_PARTIAL,
				     TK_EXIT_JOURNAL, TK_EXIT_STALE, -1 };
/* the tool's --help: every code a command can end with */
static const int tool_exits[] = { TK_EXIT_OK, TK_EXIT_FAIL, TK_EXIT_USAGE, TK_EXIT_NOPERM, TK_EXIT_NOTSUP, TK_EXIT_DATA,
				  TK_EXIT_NODEV, TK_EXIT_NOTABLE, TK_EXIT_NONETNS, TK_EXIT_NOROUTE,
				  TK_EXIT_REFUSED, TK_EXIT_PARTIAL, TK_EXIT_VERIFY, TK_EXIT_JOURNAL,
				  TK_EXIT_UNSAFE, TK_EXIT_STALE, -1 };
static const int status_exits[] = { TK_EXIT_OK, TK_EXIT_FAIL, TK_EXIT_USAGE, TK_EXIT_NOPERM, TK_EXIT_DATA,
				    TK_EXIT_NONETNS, TK_EXIT_JOURNAL, -1 };

/* --- the help texts ------------------------------------------------------------------------ */

#define PREFIX_HELP                                                                  \
	"PREFIX is ADDRESS/LEN (10.0.1.0/24, fd00::/64), a host address (a /32 or\n" \
	"/128), or 'default'. It matches the routes whose destination is exactly\n"  \
	"that prefix, in table main unless --table says otherwise.\n"
#define CHANGE_HELP "\n"                                                             \
	"Every other attribute and metric of each route stays as it is, and the\n"   \
	"journal keeps each route's whole state first, for restore. Records the\n"   \
	"journal holds of another boot, network namespace or device (or of an\n"     \
	"older quickack, which cannot be checked) are first set aside in a kept\n"   \
	"file, named in one line, never added to. Only unicast routes are changed.\n" \
	"\n"                                                                          \
	"--to ADDR changes the route the kernel uses to reach ADDR: often the\n"      \
	"default route or a subnet's, which reaches every peer it covers (a warning\n" \
	"says so). --host changes a host route for ADDR alone (/32, /128) instead:\n" \
	"when there is none, it is made as a copy of that route (its table, metric,\n" \
	"nexthops and metrics, protocol static) with the change; restore deletes it.\n" \
	"\n" PREFIX_HELP "\n"
#define CHANGE_OUTPUT                                                                    \
	"\nOutput: one summary line on stderr; 'change' records (the route, the change,\n" \
	"its result) when -f, --json or -o is given. With --dry-run, 'netlink_request'\n"  \
	"records for the routes that would change ('change' records for those already\n"   \
	"as asked), and nothing is sent.\n"

static const char tool_synopsis[] =
"Usage: quickack COMMAND [ARGS] [OPTIONS]\n"
"\n"
"Turn quick ACKs (the RTAX_QUICKACK route metric) and related delayed-ACK\n"
"knobs on or off for existing routes, or for a host route made for one peer,\n"
"keeping every other attribute and metric of each route, and undo the change\n"
"exactly from a journal.\n"
"\n"
"Commands:\n"
"  show [PREFIX]               list routes with their quickack state and metrics\n"
"  on PREFIX | --all-dev DEV   set quickack 1: the receiver ACKs\n"
"                              every segment at once\n"
"  off PREFIX | --all-dev DEV  set quickack 0 (the kernel's\n"
"                              default: delayed ACKs)\n"
"  rto-min PREFIX VALUE        set the route's rto_min, locked; it also caps the\n"
"                              delayed-ACK timer on kernels since about 6.6\n"
"  congctl PREFIX NAME         set the route's congestion control\n"
"  on --port PORTS             a socket scope: connections accepted on these\n"
"                              local ports ACK within 2 jiffies (8 ms at HZ\n"
"                              250), whatever their route; pinned in bpffs\n"
"  nodelay --dport PORTS       a socket scope: connections made to these\n"
"                              remote ports send with TCP_NODELAY\n"
"  restore                     put every route in the journal back\n"
"                              as it was before its first recorded\n"
"                              change, detach every socket scope, then\n"
"                              empty the journal\n"
"  status                      list the routes and socket scopes the journal\n"
"                              holds, and whether restore would change them\n"
"  rto-min and congctl also take --all-dev DEV instead of PREFIX.\n"
"\n"
"Each command has its own options: quickack COMMAND --help lists them.\n"
"\n";

static const char tool_footer[] =
"\n"
"How a change is made: quickack dumps the routes (RTM_GETROUTE), writes the\n"
"whole state of each route it will change to the journal and fsyncs it, then\n"
"sends one RTM_NEWROUTE with NLM_F_REPLACE (never NLM_F_CREATE: no route is\n"
"made by accident) per route, carrying every attribute the kernel reported\n"
"with only the one metric changed, many requests per datagram; the one route\n"
"it makes, a host route asked for with --to ADDR --host, goes with\n"
"NLM_F_CREATE|NLM_F_EXCL, so it never takes a route over. Then it reads the\n"
"routes back and checks that each holds exactly what was asked. When the\n"
"kernel refuses some, its message is shown and the journal still restores\n"
"every route that was changed. The journal is text, one record per line with\n"
"a CRC-32, versioned (format 3; see quickack/journal.h; formats 1 and 2 are\n"
"still read); routes are saved as the kernel's own bytes, with the boot id, the\n"
"network namespace (inode and cookie) and each device's name and ifindex. A\n"
"corrupt journal stops quickack before anything is applied, naming the line\n"
"and byte offset. Records of another boot, namespace or device are never\n"
"sent back: see quickack restore --help.\n";

static const char show_synopsis[] =
"Usage: quickack show [PREFIX] [OPTIONS]\n"
"\n"
"List the routes (or those to PREFIX) with their quickack state and metrics.\n"
"\n" PREFIX_HELP "\n";

static const char show_footer[] =
"\nOutput: one 'route' record per route (rto_min_ms in milliseconds; mtu and\n"
"advmss in bytes; initcwnd and initrwnd in segments).\n";

#define SCOPE_HELP                                                                     \
	"A socket scope is a cgroup sock_ops BPF program that sets one option on\n"    \
	"exactly the connections it matches, as they are established, in this\n"      \
	"network namespace (or --netns NS) and in the cgroup v2 directory --cgroup\n"  \
	"names (default: every cgroup). The connections that existed already are\n"   \
	"set too (a TCP socket iterator), each listed. Its BPF link is pinned in\n"    \
	"bpffs (" QS_PIN_ROOT "), so that it stays in force after quickack\n"  \
	"exits and across the service's restarts, until quickack restore unpins\n"   \
	"it; the journal records it before it is attached. A second identical\n"     \
	"scope changes nothing. No route changes. Needs cgroup v2, bpffs (mounted\n"  \
	"when missing) and Linux 5.15 or later.\n"

static const char on_synopsis[] =
"Usage: quickack on PREFIX [OPTIONS]\n"
"       quickack on --to ADDR [--host] [OPTIONS]\n"
"       quickack on --all-dev DEV [OPTIONS]\n"
"       quickack on --port PORTS [--cgroup PATH] [OPTIONS]\n"
"\n"
"Set quickack 1 on the routes to PREFIX, or on every unicast route through\n"
"DEV: the receiver ACKs every segment at once.\n"
"\n"
"With --port, on the receiver's sockets instead: the connections accepted on\n"
"those local ports (an ingest's 1935) have their delayed-ACK timer capped at\n"
"the kernel's shortest, 2 jiffies (TCP_BPF_DELACK_MAX: 8 ms at HZ 250), so\n"
"that no ACK is held 40 ms or more; they still delay an ACK, by at most that.\n"
"Other connections and every route stay as they are. A cap is not quick ACKs:\n"
"holds that long still collapse BBR's estimate of a stream sent in bursts\n"
"(bbrtrace's delayed_ack collapses), which only the route's quickack removes\n"
"(on --to ADDR --host for one sender).\n\n" SCOPE_HELP CHANGE_HELP;

static const char nodelay_synopsis[] =
"Usage: quickack nodelay --dport PORTS [--cgroup PATH] [OPTIONS]\n"
"\n"
"A socket scope on the sender: the connections made to those remote ports\n"
"(a pusher's to 1935) get TCP_NODELAY, so that Nagle never holds a frame's\n"
"tail until the previous segment is ACKed; the pushing program is not\n"
"changed (ffmpeg's own way is -tcp_nodelay 1).\n"
"\n" SCOPE_HELP "\n";

#define SCOPE_OUTPUT                                                                     \
	"\nOutput: one summary line on stderr; 'scope_conn' records (each connection\n"  \
	"that existed before, and whether it was set) when -f, --json or -o is\n"       \
	"given. With --dry-run, the scope in one line, and nothing is attached.\n"

static const char off_synopsis[] =
"Usage: quickack off PREFIX [OPTIONS]\n"
"       quickack off --to ADDR [--host] [OPTIONS]\n"
"       quickack off --all-dev DEV [OPTIONS]\n"
"\n"
"Set quickack 0 (the kernel's default: delayed ACKs) on the routes to PREFIX,\n"
"or on every unicast route through DEV.\n" CHANGE_HELP;

static const char rto_min_synopsis[] =
"Usage: quickack rto-min PREFIX VALUE [OPTIONS]\n"
"       quickack rto-min --all-dev DEV VALUE [OPTIONS]\n"
"\n"
"Set the routes' rto_min, locked (the kernel uses it only locked). VALUE: N\n"
"or Nms (milliseconds), Ns (seconds), from 1 ms to " QA_STR(QA_RTO_MIN_MAX_S) " s; or off, which\n"
"removes it. On kernels since about 6.6 it also caps the delayed-ACK timer\n"
"at rto_min - 1 ms.\n" CHANGE_HELP;

static const char congctl_synopsis[] =
"Usage: quickack congctl PREFIX NAME [OPTIONS]\n"
"       quickack congctl --all-dev DEV NAME [OPTIONS]\n"
"\n"
"Set the routes' congestion control to NAME (bbr, bbr_traced, ...); off\n"
"removes it. NAME must be registered in the kernel: bbr_traced exists only\n"
"while bbrtrace's struct_ops backend runs (the kernel refuses it\n"
"otherwise), and when bbrtrace stops, a route still naming it names a\n"
"congestion control that is gone: bbrtrace lists such routes as it exits,\n"
"and quickack show flags them. Turn it off before bbrtrace stops.\n" CHANGE_HELP;

static const char restore_synopsis[] =
"Usage: quickack restore [OPTIONS]\n"
"\n"
"Put every route in the journal back as it was before its first recorded\n"
"change, read it back to verify it, then empty the journal. A route deleted\n"
"since stays deleted: restore makes no route. A host route that quickack\n"
"made (on --to ADDR --host) was absent before, so restore deletes it.\n"
"\n"
"The journal records the boot, the network namespace and each route's\n"
"devices by name and ifindex. A route whose device was made again under the\n"
"same name (a veth, VLAN or container interface) goes back through its new\n"
"ifindex. Records of another boot (a reboot makes the routes anew: nothing\n"
"to restore), of another namespace or of this one deleted and made again,\n"
"or of a device that no longer exists while its route does, are stale:\n"
"restore refuses the whole journal and applies nothing (exit 19), unless\n"
"--discard-stale sets them aside in a kept file and restores the others.\n"
"\n";

static const char restore_footer[] =
"\nOutput: one summary line on stderr; 'change' records when -f, --json or -o\n"
"is given. With --dry-run, 'netlink_request' records, and nothing is sent.\n";

static const char status_synopsis[] =
"Usage: quickack status [OPTIONS]\n"
"\n"
"List the routes the journal holds, whether restore would change them, and\n"
"whether they belong to this boot, network namespace and devices; and the\n"
"socket scopes, whether each is in force and how many sockets it has set.\n"
"\n";

static const char status_footer[] =
"\nOutput: one 'saved_route' record per route (dev: as the journal names it;\n"
"live: same, differs or gone; identity: current, stale (another boot or\n"
"namespace, or a device made again or gone) or unknown (a format 1\n"
"journal), with why in words); one 'scope' record per socket scope (side,\n"
"ports, cgroup, in_force, sockets set as they were established and before,\n"
"refused, and the delayed-ACK maximum set, in us).\n";

static const struct opt_cli tool_cli = { tool_synopsis, tool_opts, tool_footer, NULL, tool_exits };
static const struct opt_cli cmd_clis[QA_NCMDS] = {
	[QA_SHOW] = { show_synopsis, show_opts, show_footer, NULL, show_exits },
	[QA_ON] = { on_synopsis, on_opts, CHANGE_OUTPUT SCOPE_OUTPUT, NULL, on_exits },
	[QA_OFF] = { off_synopsis, change_opts, CHANGE_OUTPUT, NULL, change_exits },
	[QA_RTO_MIN] = { rto_min_synopsis, change_opts, CHANGE_OUTPUT, NULL, change_exits },
	[QA_CONGCTL] = { congctl_synopsis, congctl_opts, CHANGE_OUTPUT, NULL, change_exits },
	[QA_NODELAY] = { nodelay_synopsis, nodelay_opts, SCOPE_OUTPUT, NULL, scope_exits },
	[QA_RESTORE] = { restore_synopsis, restore_opts, restore_footer, NULL, restore_exits },
	[QA_STATUS] = { status_synopsis, status_opts, status_footer, NULL, status_exits },
};

/* --- the command and its operands ------------------------------------------------------------ */

/* "show, on, ... or status" */
static void list_commands(char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; i < QA_NCMDS && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i == 0 ? "" : i == QA_NCMDS - 1 ? " or " : ", ",
				      cmd_names[i]);
}

/* the command's name, taken out of argv; --help and --version of the tool itself */
static enum qa_cmd take_command(int *argc, char **argv)
{
	const struct opt_cli *clis[QA_NCMDS];
	int at, cmd;
	char names[128];

	for (int i = 0; i < QA_NCMDS; i++)
		clis[i] = &cmd_clis[i];
	at = opt_first_operand(clis, QA_NCMDS, *argc, argv);
	if (at >= *argc) {
		struct qa_args none;

		opt_parse(&tool_cli, *argc, argv, &none);
		list_commands(names, sizeof(names));
		cli_usage_die("missing command: %s (see --help)", names);
	}
	if (cli_parse_choice("command", argv[at], cmd_names, &cmd))
		exit(TK_EXIT_USAGE);
	memmove(&argv[at], &argv[at + 1], (size_t)(*argc - at) * sizeof(*argv)); /* with argv's NULL */
	(*argc)--;
	return (enum qa_cmd)cmd;
}

/* how many operands the command takes: a PREFIX (unless --all-dev), then a VALUE */
static void operand_counts(const struct qa_args *a, int given, int *want_prefix, int *want_value)
{
	*want_prefix = *want_value = 0;
	switch (a->cmd) {
	case QA_SHOW: *want_prefix = given >= 1; break;
	case QA_ON:
	case QA_OFF: *want_prefix = !a->all_dev && !a->has_to && !a->scope; break;
	case QA_RTO_MIN:
	case QA_CONGCTL:
		*want_prefix = !a->all_dev && !a->has_to;
		*want_value = 1;
		break;
	default: break;
	}
}

/* one line for too many or too few operands */
static void check_operand_count(const struct qa_args *a, int n, char **pos, int want_prefix, int want_value)
{
	const char *cmd = cmd_names[a->cmd];

	if (n > want_prefix + want_value) {
		if (a->all_dev && (a->cmd == QA_ON || a->cmd == QA_OFF || n > 1))
			cli_usage_die("%s: a PREFIX ('%s') and --all-dev exclude each other", cmd, pos[0]);
		if (a->has_to && (a->cmd == QA_ON || a->cmd == QA_OFF || n > 1))
			cli_usage_die("%s: a PREFIX ('%s') and --to exclude each other", cmd, pos[0]);
		if (a->scope && a->cmd == QA_ON)
			cli_usage_die("on: a PREFIX ('%s') and --port exclude each other: --port is a socket scope, not a route",
				      pos[0]);
		cli_usage_die("%s: unexpected argument '%s'", cmd, pos[want_prefix + want_value]);
	}
	if (n == want_prefix + want_value)
		return;
	if (a->cmd == QA_RTO_MIN && n == want_prefix)
		cli_usage_die("rto-min: missing VALUE (N, Nms or Ns; or off)");
	if (a->cmd == QA_CONGCTL && n == want_prefix)
		cli_usage_die("congctl: missing NAME (a congestion control, or off)");
	cli_usage_die("%s: missing PREFIX (or --to ADDR, or --all-dev DEV)", cmd);
}

/* the change that on, off, rto-min and congctl ask for */
static void take_change(struct qa_args *a, const char *value)
{
	switch (a->cmd) {
	case QA_ON:
	case QA_OFF:
		a->change.op = QA_OP_QUICKACK;
		a->change.value = a->cmd == QA_ON;
		break;
	case QA_RTO_MIN:
		a->change.op = QA_OP_RTO_MIN;
		if (qa_parse_rto_min("rto-min", value, &a->change.value))
			exit(TK_EXIT_USAGE);
		break;
	case QA_CONGCTL:
		a->change.op = QA_OP_CONGCTL;
		if (qa_parse_congctl("congctl", value, a->change.cc))
			exit(TK_EXIT_USAGE);
		a->change.lock = a->lock;
		break;
	default: break;
	}
}

static void take_operands(struct qa_args *a, int n, char **pos)
{
	int want_prefix, want_value;

	operand_counts(a, n, &want_prefix, &want_value);
	check_operand_count(a, n, pos, want_prefix, want_value);
	if (want_prefix) {
		if (parse_prefix(pos[0], a->family, &a->prefix))
			exit(TK_EXIT_USAGE);
		a->has_prefix = true;
		if (a->family && a->family != a->prefix.addr.family)
			cli_usage_die("prefix: '%s' is not %s", pos[0], a->family == AF_INET ? "IPv4 (-4)" : "IPv6 (-6)");
		a->family = a->prefix.addr.family;
	}
	take_change(a, want_value ? pos[want_prefix] : NULL);
}

/* a socket scope (on --port, nodelay --dport) selects sockets: no route option */
static void check_scope(const struct qa_args *a)
{
	const char *route_opt = a->all_dev ? "--all-dev" : a->has_to ? "--to" : a->dev ? a->dev_opt :
				a->table ? "--table" : a->has_via ? "--via" : a->ipv4 ? "-4" : a->ipv6 ? "-6" : NULL;

	if (a->cmd == QA_NODELAY && !a->scope)
		cli_usage_die("nodelay: missing --dport PORTS (the remote ports of the connections to set)");
	if (a->cgroup && !a->scope)
		cli_usage_die("--cgroup needs a socket scope (on --port PORTS, or nodelay --dport PORTS)");
	if (a->scope && route_opt)
		cli_usage_die("%s selects routes; --port is a socket scope, which changes no route", route_opt);
}

/* what the options say together */
static void check_args(struct qa_args *a)
{
	if (a->ipv4 && a->ipv6)
		cli_usage_die("-4 and -6 exclude each other");
	a->family = a->ipv4 ? AF_INET : a->ipv6 ? AF_INET6 : 0;
	if (a->all_dev && a->dev)
		cli_usage_die("--all-dev and %s exclude each other", a->dev_opt);
	if (a->all_dev && a->has_to)
		cli_usage_die("--all-dev and --to exclude each other");
	if (a->host && !a->has_to)
		cli_usage_die("--host needs --to ADDR: the address the host route is for");
	if (a->has_to && a->family && a->family != a->to.family)
		cli_usage_die("--to: '%s' is not %s", a->to_text, a->family == AF_INET ? "IPv4 (-4)" : "IPv6 (-6)");
	a->change_records = a->fmt_set || a->output;
	check_scope(a);
}

/* --via after the prefix: the gateway must be of its family */
static void check_via(const struct qa_args *a)
{
	if (a->has_via && a->family && a->family != a->via.family)
		cli_usage_die("--via: %s is not of the prefix's family (%s)", a->via_text,
			      a->family == AF_INET ? "IPv4" : "IPv6");
}

void qa_args_parse(int argc, char **argv, struct qa_args *a)
{
	int first;

	memset(a, 0, sizeof(*a));
	a->cmd = take_command(&argc, argv);
	first = opt_parse(&cmd_clis[a->cmd], argc, argv, a);
	check_args(a);
	take_operands(a, argc - first, argv + first);
	check_via(a);
}
