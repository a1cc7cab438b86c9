// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rds_pair: RDS over RDMA (rds_rdma) between two guests, one end each.
 * The client sends messages of 1 B to 1 MiB, which the server checks for
 * content and order; then the server registers a buffer on the message
 * that carries its cookie (RDS_CMSG_RDMA_MAP: a fast registration on the
 * connection's QP; RDS_GET_MR has no QP to register through), and
 * the client RDMA-WRITEs into it and RDMA-READs it back through
 * RDS_CMSG_RDMA_ARGS, each checked byte for byte on the side that did not
 * move the data. Prints "@@RESULT PASS|FAIL name" lines.
 *
 * usage: rds_pair server|client LOCAL_IPV4 PEER_IPV4 PORT
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <linux/rds.h>

#ifndef AF_RDS
#define AF_RDS		21
#endif

#define MAX_MSG		(1 << 20)	/* RDS_MAX_MSG_SIZE */
#define RDMA_LEN	(256 * 1024)	/* the registered buffer */
#define TOKEN_WRITE	1
#define TOKEN_READ	2

/* payload sizes; each message adds its 4-byte sequence number */
static const uint32_t sizes[] = {
	1, 7, 100, 1000, 4096, 4097, 8192, 65536, 100000, 262144, MAX_MSG - 4,
};
#define NSIZES		(sizeof(sizes) / sizeof(sizes[0]))
#define ROUNDS		3
#define RECV_WAIT_S	30	/* for any message */
#define HELLO_WAIT_S	90	/* for the client's first, on the server */

static int failures;
static struct sockaddr_in peer;
static uint8_t msg[MAX_MSG + 64];

static void result(bool ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	printf("@@RESULT %s %s", ok ? "PASS" : "FAIL", name);
	if (!ok && fmt) {
		printf(" ");
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
	}
	printf("\n");
	fflush(stdout);
	failures += !ok;
}

static uint8_t pattern(uint32_t seq, uint32_t i)
{
	return (uint8_t)(seq * 31 + i * 7 + (i >> 8));
}

static int rds_socket(const char *local, int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct timeval tv = { .tv_sec = RECV_WAIT_S };
	int fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
	int trans = RDS_TRANS_IB, buf = 16 << 20;

	if (fd < 0)
		return -1;
	inet_pton(AF_INET, local, &sin.sin_addr);
	/* over the RDMA device and nothing else, with room for 1 MiB messages */
	if (setsockopt(fd, SOL_RDS, SO_RDS_TRANSPORT, &trans, sizeof(trans)) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof(buf)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Send @len bytes of @p to the peer, with a control message if @cmsg. */
static int send_to_peer(int fd, const void *p, size_t len, int cmsg_type,
			const void *cmsg_data, size_t cmsg_len)
{
	char ctl[CMSG_SPACE(sizeof(struct rds_rdma_args))] = { 0 };
	struct iovec iov = { (void *)p, len };
	struct msghdr m = {
		.msg_name = &peer, .msg_namelen = sizeof(peer),
		.msg_iov = &iov, .msg_iovlen = 1,
	};

	if (cmsg_type) {
		struct cmsghdr *c;

		m.msg_control = ctl;
		m.msg_controllen = CMSG_SPACE(cmsg_len);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_RDS;
		c->cmsg_type = cmsg_type;
		c->cmsg_len = CMSG_LEN(cmsg_len);
		memcpy(CMSG_DATA(c), cmsg_data, cmsg_len);
	}
	return sendmsg(fd, &m, 0) == (ssize_t)len ? 0 : -1;
}

/*
 * The next message into msg (its length), or -1; RDMA completion notes
 * are recorded in *@notes (by token), and one that comes alone is 0.
 */
static rds_rdma_cookie_t dest_cookie;	/* the last RDS_CMSG_RDMA_DEST seen */

static ssize_t recv_msg(int fd, int *notes)
{
	for (;;) {
		char ctl[256];
		struct iovec iov = { msg, sizeof(msg) };
		struct sockaddr_in from;
		struct msghdr m = {
			.msg_name = &from, .msg_namelen = sizeof(from),
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = ctl, .msg_controllen = sizeof(ctl),
		};
		struct cmsghdr *c;
		bool note = false;
		ssize_t n = recvmsg(fd, &m, 0);

		if (n < 0)
			return -1;
		for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
			struct rds_rdma_notify rn;

			if (c->cmsg_level == SOL_RDS && c->cmsg_type == RDS_CMSG_RDMA_DEST)
				memcpy(&dest_cookie, CMSG_DATA(c), sizeof(dest_cookie));
			if (c->cmsg_level != SOL_RDS || c->cmsg_type != RDS_CMSG_RDMA_STATUS)
				continue;
			memcpy(&rn, CMSG_DATA(c), sizeof(rn));
			if (notes && rn.user_token <= TOKEN_READ)
				notes[rn.user_token] = rn.status == RDS_RDMA_SUCCESS ? 1 : -1;
			note = true;
		}
		if (note && !n)
			return 0;
		peer.sin_port = from.sin_port;	/* the server answers whoever spoke */
		peer.sin_addr = from.sin_addr;
		return n;
	}
}

static bool recv_word(int fd, const char *word, int *notes)
{
	ssize_t n;

	/* (a note alone, or a hello sent before the answer came, is skipped) */
	do {
		n = recv_msg(fd, notes);
	} while (!n || (n >= 5 && !memcmp(msg, "HELLO", 5) && strcmp(word, "HELLO")));
	return n == (ssize_t)strlen(word) && !memcmp(msg, word, n);
}

static int server(int fd)
{
	static uint8_t buf[RDMA_LEN] __attribute__((aligned(4096)));
	struct rds_get_mr_args get = { 0 };	/* (the map's arguments) */
	struct rds_free_mr_args put = { 0 };
	uint32_t seq, bad = 0, badseq = 0;
	rds_rdma_cookie_t cookie = 0;
	struct timeval hello_wait = { .tv_sec = HELLO_WAIT_S }, wait = { .tv_sec = RECV_WAIT_S };
	size_t i;

	/* longer than the client says hello for (120 x 0.5 s), from a late start */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &hello_wait, sizeof(hello_wait));
	if (!recv_word(fd, "HELLO", NULL)) {
		result(false, "rds server: the client says hello", "errno %d", errno);
		return 1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
	send_to_peer(fd, "READY", 5, 0, NULL, 0);
	for (seq = 0; seq < NSIZES * ROUNDS; seq++) {
		uint32_t want = sizes[seq % NSIZES], got_seq;
		ssize_t n;

		do {
			n = recv_msg(fd, NULL);
		} while (n == 5 && !memcmp(msg, "HELLO", 5));
		if (n < 4) {
			result(false, "rds server: messages arrive", "message %u: %zd, errno %d",
			       seq, n, errno);
			return 1;
		}
		memcpy(&got_seq, msg, 4);
		if (got_seq != seq || (size_t)n != want + 4)
			badseq++;
		for (i = 0; i < (size_t)n - 4; i++)
			bad += msg[4 + i] != pattern(got_seq, i);
	}
	result(!bad && !badseq, "rds: 33 messages of 1 B to 1 MiB arrive in order, every byte right",
	       "%u out of order or of the wrong size, %u bytes wrong", badseq, bad);

	memset(buf, 0, sizeof(buf));
	get.vec.addr = (uintptr_t)buf;
	get.vec.bytes = sizeof(buf);
	get.cookie_addr = (uintptr_t)&cookie;
	/* the peer finds the cookie in the message's RDS_CMSG_RDMA_DEST */
	if (send_to_peer(fd, "COOKIE", 6, RDS_CMSG_RDMA_MAP, &get, sizeof(get))) {
		result(false, "rds server: RDS_CMSG_RDMA_MAP registers 256 KiB", "errno %d",
		       errno);
		return 1;
	}
	/* RDS delivers the message only once its RDMA WRITE is done */
	if (!recv_word(fd, "WROTE", NULL)) {
		result(false, "rds server: the client's RDMA WRITE message", "errno %d", errno);
		return 1;
	}
	for (bad = 0, i = 0; i < sizeof(buf); i++)
		bad += buf[i] != pattern(1000, i);
	result(!bad, "rds: an RDMA WRITE of 256 KiB into the server's registered buffer",
	       "%u bytes wrong", bad);
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = pattern(2000, i);
	send_to_peer(fd, "READ-ME", 7, 0, NULL, 0);
	/* the message of the client's READ, then its last word */
	if (!recv_word(fd, "READ", NULL) || !recv_word(fd, "DONE", NULL)) {
		result(false, "rds server: the client is done", "errno %d", errno);
		return 1;
	}
	put.cookie = cookie;
	result(!setsockopt(fd, SOL_RDS, RDS_FREE_MR, &put, sizeof(put)),
	       "rds server: RDS_FREE_MR", "errno %d", errno);
	return failures ? 1 : 0;
}

/* An RDMA op of the whole buffer through @cookie, with a message after it. */
static int rdma_op(int fd, rds_rdma_cookie_t cookie, uint8_t *buf, bool write,
		   const char *word)
{
	struct rds_iovec local = { .addr = (uintptr_t)buf, .bytes = RDMA_LEN };
	struct rds_rdma_args args = {
		.cookie = cookie,
		.remote_vec = { .addr = 0, .bytes = RDMA_LEN },
		.local_vec_addr = (uintptr_t)&local,
		.nr_local = 1,
		.flags = (write ? RDS_RDMA_READWRITE : 0) | RDS_RDMA_NOTIFY_ME,
		.user_token = write ? TOKEN_WRITE : TOKEN_READ,
	};

	return send_to_peer(fd, word, strlen(word), RDS_CMSG_RDMA_ARGS, &args,
			    sizeof(args));
}

static int client(int fd)
{
	static uint8_t buf[RDMA_LEN] __attribute__((aligned(4096)));
	rds_rdma_cookie_t cookie;
	int notes[TOKEN_READ + 1] = { 0 }, tries;
	uint32_t seq, bad;
	ssize_t n = -1;
	size_t i;

	/* the server's port takes messages only once it is bound */
	for (tries = 0; tries < 120; tries++) {
		struct timeval tv = { .tv_usec = 500000 }, wait = { .tv_sec = 30 };

		send_to_peer(fd, "HELLO", 5, 0, NULL, 0);
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		n = recv_msg(fd, NULL);
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
		if (n == 5 && !memcmp(msg, "READY", 5))
			break;
	}
	result(n == 5, "rds client: the server answers over rds_rdma", "errno %d", errno);
	if (n != 5)
		return 1;
	for (seq = 0; seq < NSIZES * ROUNDS; seq++) {
		uint32_t len = sizes[seq % NSIZES];

		memcpy(msg, &seq, 4);
		for (i = 0; i < len; i++)
			msg[4 + i] = pattern(seq, i);
		if (send_to_peer(fd, msg, len + 4, 0, NULL, 0)) {
			result(false, "rds client: sendmsg", "message %u (%u bytes): errno %d",
			       seq, len, errno);
			return 1;
		}
	}
	n = recv_msg(fd, notes);
	if (n != 6 || memcmp(msg, "COOKIE", 6) || !dest_cookie) {
		result(false, "rds client: the server's MR cookie", "%zd bytes, errno %d", n, errno);
		return 1;
	}
	cookie = dest_cookie;
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = pattern(1000, i);
	if (rdma_op(fd, cookie, buf, true, "WROTE")) {
		result(false, "rds client: RDMA WRITE through RDS_CMSG_RDMA_ARGS", "errno %d", errno);
		return 1;
	}
	if (!recv_word(fd, "READ-ME", notes)) {
		result(false, "rds client: the server checked the WRITE", "errno %d", errno);
		return 1;
	}
	memset(buf, 0, sizeof(buf));
	if (rdma_op(fd, cookie, buf, false, "READ")) {
		result(false, "rds client: RDMA READ through RDS_CMSG_RDMA_ARGS", "errno %d", errno);
		return 1;
	}
	/* the READ's note says when its data is in */
	for (tries = 0; tries < 10 && notes[TOKEN_READ] == 0; tries++)
		recv_msg(fd, notes);
	for (bad = 0, i = 0; i < sizeof(buf); i++)
		bad += buf[i] != pattern(2000, i);
	result(notes[TOKEN_WRITE] == 1 && notes[TOKEN_READ] == 1 && !bad,
	       "rds: an RDMA READ of 256 KiB from the server's buffer, both ops notified",
	       "write note %d, read note %d, %u bytes wrong", notes[TOKEN_WRITE],
	       notes[TOKEN_READ], bad);
	send_to_peer(fd, "DONE", 4, 0, NULL, 0);
	sleep(1);	/* (the last message leaves before the socket goes) */
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	int fd;

	if (argc != 5 || (strcmp(argv[1], "server") && strcmp(argv[1], "client"))) {
		fprintf(stderr, "usage: rds_pair server|client LOCAL PEER PORT\n");
		return 2;
	}
	peer.sin_family = AF_INET;
	peer.sin_port = htons(atoi(argv[4]));
	inet_pton(AF_INET, argv[3], &peer.sin_addr);
	fd = rds_socket(argv[2], atoi(argv[4]));
	if (fd < 0) {
		result(false, "rds: a socket bound over rds_rdma", "errno %d", errno);
		return 1;
	}
	return strcmp(argv[1], "server") ? client(fd) : server(fd);
}
