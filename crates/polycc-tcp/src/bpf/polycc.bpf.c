// SPDX-License-Identifier: GPL-2.0
/*
 * polycc's kernel-TCP shim: a struct_ops TCP congestion controller named "polycc" that decides
 * nothing itself. On every ACK (`cong_control`, which the kernel calls with the ACK's rate
 * sample) it reports what the ACK measured to user space through a ring buffer, and it applies
 * the window and pacing rate user space last wrote for the socket. The design is CCP's
 * (Narayan et al., SIGCOMM 2018): the datapath measures and enforces, the algorithm runs in
 * user space, where every polycc controller and policy is available.
 *
 * GPL: struct_ops congestion controllers use GPL-only kernel symbols.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_endian.h>

char LICENSE[] SEC("license") = "GPL";

/* What user space decided for a socket: a window in packets and a pacing rate in bytes/s (0: no
 * pacing limit). Shared layout: `crate::shim::Decision`. */
struct decision {
	__u32 cwnd;
	__u32 reserved;
	__u64 pacing_rate;
};

/* Decisions by flow key (`flow_key`); key 0 holds the one for sockets without their own. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct decision);
} decisions SEC(".maps");

/* One ACK's measurements. Shared layout: `crate::report::Report`. */
struct report {
	__u64 now_ns;
	__u32 key;
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
};

/* 1 MiB: 16 384 reports, several round trips of ACKs at 100 Mbit/s even if user space stalls. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} reports SEC(".maps");

/* The socket's local port in the high half, the remote port in the low half (host order):
 * unique among one host's connections to one server, which is what the testbed makes. */
static __always_inline __u32 flow_key(const struct sock *sk)
{
	return ((__u32)sk->__sk_common.skc_num << 16) | bpf_ntohs(sk->__sk_common.skc_dport);
}

SEC("struct_ops")
void BPF_PROG(polycc_init, struct sock *sk)
{
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

SEC("struct_ops")
void BPF_PROG(polycc_cong_control, struct sock *sk, __u32 ack, int flag, const struct rate_sample *rs)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	__u32 key = flow_key(sk);
	struct report *r = bpf_ringbuf_reserve(&reports, sizeof(*r), 0);

	if (r) {
		r->now_ns = bpf_ktime_get_ns();
		r->key = key;
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
		bpf_ringbuf_submit(r, 0);
	}
	/* A full ring drops the report, never the ACK: the window below still applies. */

	struct decision *d = bpf_map_lookup_elem(&decisions, &key);
	if (!d) {
		__u32 any = 0;
		d = bpf_map_lookup_elem(&decisions, &any);
	}
	/* Without a decision the socket keeps the window it has (at first the initial window of
	 * 10 packets): a slow, safe sender until user space speaks. Two packets is TCP's floor. */
	if (d && d->cwnd >= 2) {
		tp->snd_cwnd = d->cwnd;
		sk->sk_pacing_rate = d->pacing_rate ? d->pacing_rate : ~0UL;
	}
}

SEC(".struct_ops.link")
struct tcp_congestion_ops polycc = {
	.init = (void *)polycc_init,
	.ssthresh = (void *)polycc_ssthresh,
	.undo_cwnd = (void *)polycc_undo_cwnd,
	.cong_control = (void *)polycc_cong_control,
	.name = "polycc",
};
