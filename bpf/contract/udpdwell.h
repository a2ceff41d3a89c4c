/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What udpdwell's kernel side keeps per UDP socket, shared by the BPF programs
 * and user space (fixed-size __u types only). The FIFO that matches each read
 * with its enqueue is in bpf/contract/udpdwell_fifo.h.
 *
 * Histogram edges follow Prometheus `le` semantics (upper-inclusive), written
 * down once here: bucket i holds the dwell times d with
 *     le[i-1] < d <= le[i]      (le[-1] = 0, le[8] = +Inf)
 * with le = 10, 50, 100, 500 us, 1, 5, 10, 50 ms. So exactly 10 us falls in
 * the first bucket ("<10 us" in the table means "<= 10 us"), 10.001 us in the
 * second.
 *
 * Where the state lives. The sockets' states are the slots of one array map
 * (ud_state, --max-sockets slots), memory-mapped by user space, which reads it
 * without a system call per socket. The array is mmapable, so each slot
 * starts on a page or a 64-byte boundary and the cache lines below are real
 * lines: the enqueue side and the read side, which usually run on different
 * CPUs, each write lines of their own. A socket finds its slot through
 * socket-local storage (tracepoint and fentry backends: one pointer walk, no
 * hashing) or through a hash map (kprobe backend, which cannot use
 * socket-local storage). The array is the bound: when every slot is taken, a
 * new socket takes the slot of the least recently active one (the CLOCK, or
 * second-chance, approximation of LRU, as the kernel's own LRU maps use), and
 * the eviction is counted.
 */
#ifndef UDPDWELL_H
#define UDPDWELL_H

#include <linux/types.h>

#ifndef __cplusplus
#ifndef bool
#define bool _Bool
#endif
#endif

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

#define UD_NBUCKETS 9
#define UD_RING 2048          /* stamps per socket: a power of two */
#define UD_RING_MASK (UD_RING - 1)
#define UD_MAX_STEP 64        /* stamps added or dropped per event at most */
#define UD_GRACE_NS 2000000ULL /* an excess of stamps must last this long */
#define UD_CHECK_NS 500000ULL /* the read side resynchronises at least this often */
#define UD_DEFAULT_SOCKETS 512
#define UD_CLOCK_SCAN 32      /* slots the CLOCK hand looks at per new socket */

#define UD_MSG_PEEK 0x2
#define UD_MSG_ERRQUEUE 0x2000
#define UD_IPPROTO_UDP 17

/* reasons used when the kernel has no enum skb_drop_reason (legacy drops) */
#define UD_REASON_LEGACY_RCVBUFF 0xfffffff1u
#define UD_REASON_LEGACY_PROTO_MEM 0xfffffff2u

/* global per-CPU counters */
enum ud_counter {
	UD_CNT_INSERTS = 0,    /* slots given to a socket */
	UD_CNT_REUSED,         /* a socket address reused by another port (kprobe): reset */
	UD_CNT_DROP_INSERTS,   /* (socket, reason) pairs added to ud_drops */
	UD_CNT_DROPS_NO_SOCK,  /* drops of a wanted socket that found no slot */
	UD_CNT_EVICTED,        /* slots taken from another socket (the bound at work) */
	UD_CNT_NO_SLOT,        /* new sockets that found no slot (racing claims) */
	UD_CNT_MAX,
};

/*
 * Where the enqueue and read programs stop, for bench/60-udpdwell.sh's cost
 * breakdown only (rodata targ_stop_at of bpf/udpdwell_tp_stages.bpf.c, set
 * by bench/udpdwell_stages; udpdwell's own objects have no such knob). Each stage adds
 * one step to the one before; a stage a hook does not have adds nothing
 * there. The difference between two stages' cost is that step's cost.
 */
enum ud_stage {
	UD_STAGE_ALL = 0, /* the whole program, as udpdwell runs it */
	UD_STAGE_EMPTY,   /* return at once: the hook's floor */
	UD_STAGE_FILTER,  /* + a UDP socket in the port range? reads: took a datagram? */
	UD_STAGE_CLOCK,   /* + the clock read (the enqueue or read stamp) */
	UD_STAGE_SLOT,    /* + the socket's slot: socket-local storage, generation check */
	UD_STAGE_STATS,   /* + (reads) this CPU's figures for the slot: lookup, generation */
	UD_STAGE_FIFO,    /* + the FIFO: push (enqueue); check and pop (read) */
	UD_STAGE_ACCOUNT, /* + (reads) the dwell accounted (sum, bucket, maxima), excess check */
	UD_STAGE_MAX,     /* ALL adds to ACCOUNT (reads) the reader's tgid and comm */
};
/* the stages' names and what each adds, by enum ud_stage, for the breakdown's table */
#define UD_STAGE_NAMES                                                                  \
	{ "all", "empty", "filter", "clock", "slot", "stats", "fifo", "account" }
#define UD_STAGE_WHAT                                                                   \
	{ "the rest: the reader's tgid and comm (reads)",                               \
	  "the floor: an empty program on the hook (dispatch, bpf_stats)",              \
	  "the filter: UDP, port in range; reads: took a datagram",                     \
	  "one clock read, bpf_ktime_get_ns (the stamp)",                               \
	  "the socket's slot: socket-local storage, slot, generation",                  \
	  "this CPU's figures for the slot: lookup, generation (reads)",                \
	  "the FIFO: push (enqueue); check and pop (read)",                             \
	  "the dwell accounted: sum, bucket, maxima; excess check (reads)" }

/* a socket's slot: what socket-local storage (or the kprobe index) holds */
struct ud_sock_ref {
	__u32 slot;
	__u32 gen;   /* the slot's generation when it was given to this socket */
};

struct ud_drop_key {
	__u32 slot;
	__u32 gen;
	__u32 reason; /* enum skb_drop_reason of the running kernel */
	__u32 pad;
};

#define UD_LINE __attribute__((aligned(64)))

struct ud_sock {
	/* line 0: ownership and identity, read by every event, written when the
	 * slot changes hands (and `ref` once per turn of the CLOCK hand) */
	__u64 owner;        /* struct sock *, 0: a free slot */
	__u32 gen;          /* bumped whenever the slot changes hands */
	__u8 ref;           /* CLOCK: set by activity, cleared by the hand */
	__u8 pad0;
	__u16 family;
	__u8 addr[16];      /* local address, IPv4 as ::ffff:a.b.c.d */
	__u16 port;         /* local port, host order */
	__u16 pad1;
	__u32 netns;        /* network namespace inode */
	__u64 ino;          /* socket inode (as in ss and /proc/PID/fd) */

	/* line 1: written by the enqueue side */
	__u64 tail UD_LINE; /* stamps pushed; [head, tail) are datagrams queued */
	__u64 enq_event_ns; /* the last enqueue event */
	__u64 ring_full;    /* events that found the ring full (stamps come later) */

	/* line 2: written by the read side */
	__u64 head UD_LINE;
	__u64 read_event_ns; /* the last read */
	__u64 read_checked_ns; /* the read side's last full resynchronisation */
	__u32 tgid;         /* the last process that read */
	__u32 pad2;
	char comm[16];

	/* line 3: written by resynchronisations only */
	__u64 resync_added UD_LINE; /* stamps added at a read: enqueues nobody signalled */
	__u64 resync_dropped;
	/* an excess of stamps over the queue, and since when */
	__u64 excess_since_ns;
	__u64 excess_min;

	__u64 ring[UD_RING] UD_LINE;
};

/*
 * What reads add up, per CPU (ud_stats, a per-CPU array indexed like
 * ud_state): plain additions on lines no other CPU writes, where shared
 * counters would need two locked instructions per read. A CPU's value counts
 * for the slot's current socket only while its gen matches the slot's; the
 * first read that finds another gen starts it afresh. User space adds the
 * CPUs up.
 */
struct ud_sock_stats {
	/*
	 * Every read this CPU accounted for the slot, whatever its generation:
	 * kept when a new socket claims the slot, so user space counts the
	 * reads of a socket whose slot changed hands before it reported them
	 * (mod 2^32). It comes first and is counted last (ud_account): a copy
	 * of the figures, which reads in address order, never sees it ahead.
	 */
	__u32 reads;
	__u32 gen;
	__u64 sum_ns;
	__u64 buckets[UD_NBUCKETS]; /* reads matched: their sum */
	__u64 max_ns;
	__u64 max_epoch_ns[2]; /* maximum per interval, slot = epoch & 1 */
	__u32 max_epoch_tag[2]; /* the interval number (low 32 bits) */
	__u64 unmatched;      /* reads that found no stamp */
};

/* whole cache lines, so that consecutive slots keep the layout's lines */
_Static_assert(sizeof(struct ud_sock) % 64 == 0, "struct ud_sock: whole cache lines");
_Static_assert(sizeof(struct ud_sock_stats) == 128, "struct ud_sock_stats: two cache lines");

/* upper edges in ns of the first 8 buckets; the 9th is +Inf */
#define UD_LE0 10000ULL
#define UD_LE1 50000ULL
#define UD_LE2 100000ULL
#define UD_LE3 500000ULL
#define UD_LE4 1000000ULL
#define UD_LE5 5000000ULL
#define UD_LE6 10000000ULL
#define UD_LE7 50000000ULL

static __always_inline __u32 ud_bucket(__u64 dwell_ns)
{
	if (dwell_ns <= UD_LE3) {
		if (dwell_ns <= UD_LE1)
			return dwell_ns <= UD_LE0 ? 0 : 1;
		return dwell_ns <= UD_LE2 ? 2 : 3;
	}
	if (dwell_ns <= UD_LE5)
		return dwell_ns <= UD_LE4 ? 4 : 5;
	if (dwell_ns <= UD_LE7)
		return dwell_ns <= UD_LE6 ? 6 : 7;
	return 8;
}

/* user space's key of a socket's state: its slot and the slot's generation */
static __always_inline __u64 ud_key(__u32 slot, __u32 gen)
{
	return (__u64)gen << 32 | slot;
}

#endif
