// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * memcpy_bw: one CPU's memcpy bandwidth in MB/s, the bound of a software
 * RDMA device's loopback (each payload byte is copied twice: into the
 * packet, out of it). Copies a block of BYTES between two buffers for
 * about a second, the destination rotating through 64 MiB when BYTES is
 * small, so a figure for a 64 KiB block is what a 64 KiB message's copy
 * into a fresh buffer costs, not a copy that stays in the L1 cache.
 *
 * usage: memcpy_bw BYTES     prints "memcpy_bw bytes=N MBps=F"
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define AREA	(64UL << 20)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	unsigned long bytes = argc == 2 ? strtoul(argv[1], NULL, 0) : 0;
	unsigned long slots, i = 0;
	uint8_t *src, *dst;
	double t0, t;

	if (!bytes || bytes > AREA) {
		fprintf(stderr, "usage: memcpy_bw BYTES (1 to %lu)\n", AREA);
		return 2;
	}
	src = malloc(bytes);
	dst = malloc(AREA);
	if (!src || !dst) {
		fprintf(stderr, "memcpy_bw: out of memory\n");
		return 1;
	}
	memset(src, 0x5a, bytes);
	memset(dst, 0, AREA);	/* (faulted in before the clock starts) */
	slots = AREA / bytes;
	t0 = now();
	do {
		memcpy(dst + (i++ % slots) * bytes, src, bytes);
		__asm__ __volatile__("" : : "r"(dst) : "memory");	/* (the copy stays) */
		t = now();
	} while (t - t0 < 1.0);
	printf("memcpy_bw bytes=%lu MBps=%.1f\n", bytes, i * (double)bytes / (t - t0) / 1e6);
	free(src);
	free(dst);
	return 0;
}
