// SPDX-License-Identifier: GPL-2.0
/*
 * polycc's kernel-TCP shim: a struct_ops TCP congestion controller named "polycc" that decides
 * nothing itself. On every ACK (`cong_control`, which the kernel calls with the ACK's rate
 * sample) it applies the window and pacing rate user space last wrote for the socket and
 * reports what the ACK measured to user space through a ring buffer; when the socket lets go
 * of the controller (`release`) it reports that too and forgets the socket's decision. The
 * design is CCP's (Narayan et al., SIGCOMM 2018): the datapath measures and enforces, the
 * algorithm runs in user space, where every polycc controller and policy is available.
 *
 * Safe fallback: while a socket has no decision of its own fresher than STALE_NS and no default
 * decision (key 0) exists, it holds at most TCP's initial window (INIT_CWND) and is not paced
 * (its pacing rate sizes TSO bursts as the kernel's own controllers' does). That covers the
 * time before user space first speaks and a user-space agent that died or stalls: such a
 * socket keeps sending, slowly, instead of using a window decided for a path long gone.
 *
 * GPL: struct_ops congestion controllers use GPL-only kernel symbols.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_endian.h>

char LICENSE[] SEC("license") = "GPL";

/* RFC 6928 (Linux TCP_INIT_CWND): the window of a socket without a fresh decision. */
#define INIT_CWND 10
/* A decision older than this is the agent's no more (it refreshes live ones every 250 ms:
 * `crate::agent::REFRESH`). One second is long against any RTT the testbed emulates, short
 * against a stuck agent. */
#define STALE_NS 1000000000ULL
/* enum sk_pacing: SK_PACING_NEEDED has TCP's internal pacing space packets at sk_pacing_rate
 * (the testbed has no fq qdisc to do it), as BBR asks in its init; SK_PACING_NONE sends what
 * the window allows at once, as the kernel's CUBIC does without fq. */
#define PACING_NONE 0
#define PACING_NEEDED 1
/* tcp_update_pacing_rate's ratios (sysctl tcp_pacing_ss_ratio / tcp_pacing_ca_ratio defaults,
 * percent): an unpaced socket's sk_pacing_rate still sizes its TSO bursts (tcp_tso_autosize). */
#define PACING_SS_RATIO 200
#define PACING_CA_RATIO 120
#define USEC_PER_SEC 1000000ULL
/* decision.flags: the controller is in slow start (the ratio above); the ACK it answers found
 * the socket reducing its window (fast recovery, CWR or after a timeout). */
#define DECISION_SLOW_START 1
#define DECISION_REDUCING 2

/* What user space decided for a socket. Shared layout: `crate::report::Decision`. */
struct decision {
	__u32 cwnd;          /* packets; below 2 the decision is ignored */
	__u32 flags;         /* DECISION_SLOW_START */
	__u64 pacing_rate;   /* bytes/s, 0: not paced */
	__u64 ack_ns;        /* now_ns of the report that led to it (latency measurement) */
	__u64 decided_ns;    /* CLOCK_MONOTONIC when user space wrote it (staleness) */
	__u32 in_flight;     /* packets in flight at the ACK it answers */
	__u32 pad;
};

/* Decisions by socket id (`state_of`); id 0 holds the one for sockets without their own. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct decision);
} decisions SEC(".maps");

/* Each socket's id and ports, taken when it first meets the controller (by `release` the
 * remote port is zeroed). */
struct socket_state {
	__u64 id;
	__u32 ports;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct socket_state);
} socket_states SEC(".maps");

/* The last id given to a socket: ids count from 1 for the registration's life, so they are
 * unique while user space knows them (ports are not: a server's sockets share the local port,
 * and clients on two hosts may use the same one). */
__u64 last_id = 0;

#define REPORT_ACK 0
#define REPORT_RELEASE 1

/* One ACK's measurements, or a socket's release. Shared layout: `crate::report::Report`. */
struct report {
	__u64 now_ns;
	__u32 ports;         /* local port << 16 | remote port (`flow_ports`) */
	__s32 rtt_us;        /* this ACK's RTT sample, -1 when it has none */
	__u32 acked_sacked;  /* packets newly delivered (cumulatively or selectively) */
	__u32 losses;        /* packets newly marked lost */
	__s32 delivered;     /* packets delivered over the rate sample's interval */
	__s32 interval_us;   /* the rate sample's interval, -1 when it has none */
	__u32 prior_in_flight;
	__u32 snd_cwnd;
	__u32 srtt_us;       /* smoothed RTT (the kernel keeps it times 8) */
	__u32 mss;
	__u32 delivered_total;
	__u32 app_limited;
	__u32 kind;          /* REPORT_ACK or REPORT_RELEASE */
	__u32 in_flight;     /* packets in flight after this ACK (tcp_packets_in_flight) */
	__u32 lost_total;    /* packets marked lost over the connection's life (tp->lost) */
	__u32 delivered_ce;  /* packets delivered with ECN-CE over the connection's life */
	__u64 bytes_acked;   /* bytes cumulatively acknowledged over the connection's life */
	__u64 bytes_sent;    /* bytes sent, retransmissions included, over the connection's life */
	__u64 applied_ack_ns; /* ack_ns of the decision applied at this ACK, 0: none (fallback) */
	__u32 rttvar_us;     /* RTT variation (the kernel keeps mdev times 4) */
	__u32 min_rtt_us;    /* the kernel's windowed min RTT */
	__u32 ca_state;      /* TCP_CA_Open .. TCP_CA_Loss */
	__u32 pacing_status;
	__u64 rack_sent_us;  /* send time of the most recently delivered packet (tp->rack.mstamp) */
	__u32 retrans_total; /* segments retransmitted over the connection's life (tp->total_retrans) */
	__u32 retrans_out;   /* retransmitted segments in flight (tp->retrans_out) */
	__u64 id;            /* the socket's id (`socket_state`) */
	__u64 cookie;        /* the socket cookie (SO_COOKIE), 0 until one was asked for */
};

/* 1 MiB: 9 000 reports, several round trips of ACKs at 100 Mbit/s even if user space stalls. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} reports SEC(".maps");

/* The socket's local port in the high half, the remote port in the low half (host order), by
 * which user space may name it. The local port is read from inet_sport, which stays set while
 * the socket lives (skc_num is zeroed when the port is released at TCP_CLOSE). */
static __always_inline __u32 flow_ports(const struct sock *sk)
{
	const struct inet_sock *inet = (const struct inet_sock *)sk;

	return ((__u32)bpf_ntohs(inet->inet_sport) << 16) | bpf_ntohs(sk->__sk_common.skc_dport);
}

/* The socket's state, made at its first meeting with the controller; NULL only when the kernel
 * has no memory for it (the socket then runs on the default decision or the fallback). */
static __always_inline struct socket_state *state_of(struct sock *sk)
{
	struct socket_state *s =
		bpf_sk_storage_get(&socket_states, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);

	if (s && !s->id) {
		s->id = __sync_add_and_fetch(&last_id, 1);
		s->ports = flow_ports(sk);
	}
	return s;
}

SEC("struct_ops")
void BPF_PROG(polycc_init, struct sock *sk)
{
	state_of(sk);
}

/* The socket lets go of the controller (it closes, or switches controller): user space drops
 * its controller, and the socket's decision goes. */
SEC("struct_ops")
void BPF_PROG(polycc_release, struct sock *sk)
{
	struct socket_state *s = bpf_sk_storage_get(&socket_states, sk, 0, 0);
	__u64 id;
	struct report *r;

	if (!s)
		return;
	id = s->id;
	bpf_map_delete_elem(&decisions, &id);
	r = bpf_ringbuf_reserve(&reports, sizeof(*r), 0);
	if (!r)
		return;
	__builtin_memset(r, 0, sizeof(*r));
	r->now_ns = bpf_ktime_get_ns();
	r->id = id;
	r->ports = s->ports;
	r->rtt_us = -1;
	r->interval_us = -1;
	r->kind = REPORT_RELEASE;
	bpf_ringbuf_submit(r, 0);
}

/* Loss recovery asks for a threshold; the window is user space's, so the current one stays. */
SEC("struct_ops")
__u32 BPF_PROG(polycc_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = (struct tcp_sock *)sk;
	return tp->snd_ssthresh;
}

SEC("struct_ops")
__u32 BPF_PROG(polycc_undo_cwnd, struct sock *sk)
{
	const struct tcp_sock *tp = (struct tcp_sock *)sk;
	return tp->snd_cwnd;
}

/* The socket's own decision while fresh, else the default one (key 0, which user space sets
 * on purpose and which therefore never goes stale), else NULL. */
static __always_inline struct decision *fresh_decision(__u64 id, __u64 now)
{
	__u64 any = 0;
	struct decision *d = bpf_map_lookup_elem(&decisions, &id);

	if (d && d->cwnd >= 2 && now - d->decided_ns <= STALE_NS)
		return d;
	d = bpf_map_lookup_elem(&decisions, &any);
	if (d && d->cwnd >= 2)
		return d;
	return NULL;
}

/* What tcp_update_pacing_rate sets for a socket whose controller sets no rate: the window per
 * smoothed RTT, times 2 in slow start and 1.2 after. Not paced (PACING_NONE): it sizes the
 * TSO bursts as for the kernel's own window-based controllers. */
static __always_inline void unpaced(struct sock *sk, const struct tcp_sock *tp, bool slow_start)
{
	__u64 rate = (__u64)tp->mss_cache * ((USEC_PER_SEC / 100) << 3);
	__u32 packets = tp->snd_cwnd > tp->packets_out ? tp->snd_cwnd : tp->packets_out;

	rate *= slow_start ? PACING_SS_RATIO : PACING_CA_RATIO;
	rate *= packets;
	if (tp->srtt_us)
		rate /= tp->srtt_us;
	if (rate > sk->sk_max_pacing_rate)
		rate = sk->sk_max_pacing_rate;
	sk->sk_pacing_status = PACING_NONE;
	sk->sk_pacing_rate = rate;
}

/* tcp_packets_in_flight() */
static __always_inline __u32 packets_in_flight(const struct tcp_sock *tp)
{
	return tp->packets_out - (tp->sacked_out + tp->lost_out) + tp->retrans_out;
}

/* The window to apply from decision d. A decision takes effect an ACK after the one it
 * answered, and while the kernel reduces its window (fast recovery, CWR) that lag matters:
 * - a decision made before the reduction began (the controller has not seen the loss yet)
 *   would let the full window out at the ACK that found the loss, into a queue that just
 *   overflowed; until the controller answers, the socket sends what the kernel's PRR sends at
 *   that ACK: one packet more than is in flight (tcp_cwnd_reduction's forced retransmission);
 * - a reducing controller writes the kernel's kind of window, what is in flight plus what may
 *   go now (PRR); applied an ACK later, after deliveries lowered what is in flight, it would
 *   let a packet go for each one delivered and the reduction would not drain the queue, so it
 *   lets go at most what it allowed over the in-flight it saw. */
static __always_inline __u32 reduction_window(const struct inet_connection_sock *icsk,
					      const struct tcp_sock *tp, const struct decision *d)
{
	__u32 pipe, cap;

	if (icsk->icsk_ca_state != TCP_CA_Recovery && icsk->icsk_ca_state != TCP_CA_CWR)
		return d->cwnd;
	pipe = packets_in_flight(tp);
	if (!(d->flags & DECISION_REDUCING))
		cap = pipe + 1;
	else if (d->cwnd > d->in_flight)
		cap = pipe + (d->cwnd - d->in_flight);
	else
		return d->cwnd;
	if (cap < 2)
		cap = 2;
	return cap < d->cwnd ? cap : d->cwnd;
}

SEC("struct_ops")
void BPF_PROG(polycc_cong_control, struct sock *sk, __u32 ack, int flag, const struct rate_sample *rs)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	struct inet_connection_sock *icsk = (struct inet_connection_sock *)sk;
	struct socket_state *s = state_of(sk);
	__u64 id = s ? s->id : 0;
	__u64 now = bpf_ktime_get_ns();
	struct decision *d = fresh_decision(id, now);
	__u64 applied = 0;
	struct report *r;

	/* Two packets is TCP's floor. */
	if (d) {
		tp->snd_cwnd = reduction_window(icsk, tp, d);
		if (d->pacing_rate) {
			sk->sk_pacing_status = PACING_NEEDED;
			sk->sk_pacing_rate = d->pacing_rate;
		} else {
			unpaced(sk, tp, d->flags & DECISION_SLOW_START);
		}
		applied = d->ack_ns;
	} else {
		if (tp->snd_cwnd > INIT_CWND || tp->snd_cwnd < 2)
			tp->snd_cwnd = INIT_CWND;
		unpaced(sk, tp, true);
	}

	r = bpf_ringbuf_reserve(&reports, sizeof(*r), 0);
	/* A full ring drops the report, never the ACK: the window above still applies. */
	if (!r)
		return;
	r->now_ns = now;
	r->id = id;
	r->ports = flow_ports(sk);
	r->cookie = sk->__sk_common.skc_cookie.counter;
	r->rtt_us = rs->rtt_us;
	r->acked_sacked = rs->acked_sacked;
	r->losses = rs->losses;
	r->delivered = rs->delivered;
	r->interval_us = rs->interval_us;
	r->prior_in_flight = rs->prior_in_flight;
	r->snd_cwnd = tp->snd_cwnd;
	r->srtt_us = tp->srtt_us >> 3;
	r->mss = tp->mss_cache;
	r->delivered_total = tp->delivered;
	r->app_limited = rs->is_app_limited;
	r->kind = REPORT_ACK;
	r->in_flight = packets_in_flight(tp);
	r->lost_total = tp->lost;
	r->delivered_ce = tp->delivered_ce;
	r->bytes_acked = tp->bytes_acked;
	r->bytes_sent = tp->bytes_sent;
	r->applied_ack_ns = applied;
	r->rttvar_us = tp->mdev_us >> 2;
	r->min_rtt_us = tp->rtt_min.s[0].v;
	r->ca_state = icsk->icsk_ca_state;
	r->pacing_status = sk->sk_pacing_status;
	r->rack_sent_us = tp->rack.mstamp;
	r->retrans_total = tp->total_retrans;
	r->retrans_out = tp->retrans_out;
	bpf_ringbuf_submit(r, 0);
}

SEC(".struct_ops.link")
struct tcp_congestion_ops polycc = {
	.init = (void *)polycc_init,
	.release = (void *)polycc_release,
	.ssthresh = (void *)polycc_ssthresh,
	.undo_cwnd = (void *)polycc_undo_cwnd,
	.cong_control = (void *)polycc_cong_control,
	.name = "polycc",
};
