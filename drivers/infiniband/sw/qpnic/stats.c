// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Per-port counters (`rdma statistic show link DEV/1`, and
 * /sys/class/infiniband/DEV/ports/1/hw_counters). Counted per CPU on the
 * packet paths, summed when read; a bad packet is counted, never logged.
 */
#include <linux/percpu.h>

#include "qpnic.h"
#include "trace.h"

static const struct rdma_stat_desc qpnic_counter_descs[] = {
	[QPNIC_CNT_RX_PACKETS].name = "rx_packets",
	[QPNIC_CNT_RX_ICRC_ERRORS].name = "rx_icrc_errors",
	[QPNIC_CNT_RX_DROP_MALFORMED].name = "rx_drop_malformed",
	[QPNIC_CNT_RX_DROP_OPCODE].name = "rx_drop_bad_opcode",
	[QPNIC_CNT_RX_DROP_PKEY].name = "rx_drop_bad_pkey",
	[QPNIC_CNT_RX_DROP_UNKNOWN_QP].name = "rx_drop_unknown_qp",
	[QPNIC_CNT_RX_DROP_QP_TYPE].name = "rx_drop_qp_type",
	[QPNIC_CNT_RX_DROP_QP_STATE].name = "rx_drop_qp_state",
	[QPNIC_CNT_RX_DROP_QKEY].name = "rx_drop_bad_qkey",
	[QPNIC_CNT_RX_DROP_NO_RECV_WQE].name = "rx_drop_no_recv_wqe",
	[QPNIC_CNT_TX_PACKETS].name = "tx_packets",
	[QPNIC_CNT_TX_DROP_NO_ROUTE].name = "tx_drop_no_route",
	[QPNIC_CNT_TX_DROP_NO_MEM].name = "tx_drop_no_mem",
	[QPNIC_CNT_TX_DROP_STACK].name = "tx_drop_stack",
	[QPNIC_CNT_TX_STACK_FULL].name = "tx_stack_full",
	[QPNIC_CNT_LOOPBACK_PACKETS].name = "loopback_packets",
	[QPNIC_CNT_LOOPBACK_DIRECT_ACKS].name = "loopback_direct_acks",
	[QPNIC_CNT_TX_RETRANSMITS].name = "tx_retransmits",
	[QPNIC_CNT_ACK_TIMEOUTS].name = "ack_timeouts",
	[QPNIC_CNT_ACK_PROBES].name = "ack_probes",
	[QPNIC_CNT_TX_RNR_NAKS].name = "tx_rnr_naks",
	[QPNIC_CNT_RX_RNR_NAKS].name = "rx_rnr_naks",
	[QPNIC_CNT_TX_ERROR_NAKS].name = "tx_error_naks",
	[QPNIC_CNT_RX_ERROR_NAKS].name = "rx_error_naks",
	[QPNIC_CNT_RX_SEQ_NAKS].name = "rx_seq_naks",
	[QPNIC_CNT_RX_OUT_OF_SEQUENCE].name = "rx_out_of_sequence",
	[QPNIC_CNT_RX_DUP_REQUESTS].name = "rx_duplicate_requests",
	[QPNIC_CNT_RX_DROP_STALE].name = "rx_drop_stale_response",
	[QPNIC_CNT_RX_MCAST].name = "rx_multicast_packets",
	[QPNIC_CNT_LOOPBACK_DROPS].name = "loopback_drops",
	[QPNIC_CNT_RX_UC_DROPS].name = "rx_uc_dropped_messages",
	[QPNIC_CNT_RX_ECN_MARKED].name = "rx_ecn_marked_requests",
	[QPNIC_CNT_TX_CNPS].name = "tx_cnps",
	[QPNIC_CNT_RX_CNPS].name = "rx_cnps",
	[QPNIC_CNT_WINDOW_CUTS].name = "window_cuts",
};

static_assert(ARRAY_SIZE(qpnic_counter_descs) == QPNIC_NUM_COUNTERS);

/* A packet dropped: counted by its reason, and traced with it. */
void qpnic_drop(struct qpnic_dev *qdev, enum qpnic_counter reason,
		const struct qpnic_pkt *pkt)
{
	qpnic_count(qdev, reason);
	trace_qpnic_pkt_drop(&qdev->ibdev, qpnic_counter_descs[reason].name, pkt);
}

int qpnic_counters_init(struct qpnic_dev *qdev)
{
	qdev->counters = alloc_percpu(struct qpnic_counters);
	return qdev->counters ? 0 : -ENOMEM;
}

void qpnic_counters_free(struct qpnic_dev *qdev)
{
	free_percpu(qdev->counters);
	qdev->counters = NULL;
}

static u64 qpnic_counter_read(struct qpnic_dev *qdev, enum qpnic_counter id)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu_ptr(qdev->counters, cpu)->val[id]);
	return sum;
}

static struct rdma_hw_stats *qpnic_alloc_hw_port_stats(struct ib_device *ibdev,
						       u32 port)
{
	return rdma_alloc_hw_stats_struct(qpnic_counter_descs,
					  ARRAY_SIZE(qpnic_counter_descs),
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

static int qpnic_get_hw_stats(struct ib_device *ibdev,
			      struct rdma_hw_stats *stats, u32 port, int index)
{
	struct qpnic_dev *qdev = to_qdev(ibdev);
	int i;

	for (i = 0; i < QPNIC_NUM_COUNTERS; i++)
		stats->value[i] = qpnic_counter_read(qdev, i);
	return QPNIC_NUM_COUNTERS;
}

const struct ib_device_ops qpnic_stats_ops = {
	.alloc_hw_port_stats = qpnic_alloc_hw_port_stats,
	.get_hw_stats = qpnic_get_hw_stats,
};
