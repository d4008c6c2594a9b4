// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * tcploop: one process at both ends of a TCP connection over loopback,
 * writing and reading 16 KiB at a time for SECS seconds.  Its sends run the
 * receive path in the softirq that the send's local_bh_enable raises, on the
 * CPU's IRQ stack while this process is current: the segments and ACKs freed
 * there are freed in an interrupt, not by the process (the daemon's
 * irq_frees), and those its reads free are its own.  Each round also opens
 * and closes an eventfd: a struct file freed by the process itself, never
 * in an interrupt.  Prints "pid PID" first, then the bytes moved.
 *
 *   tcploop SECS
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	static char buf[16384];
	unsigned long long moved = 0;
	int l, c, s, secs;
	double end;

	if (argc != 2 || (secs = atoi(argv[1])) <= 0 || secs > 3600) {
		fprintf(stderr, "usage: tcploop SECS\n");
		return 2;
	}
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM, 0);
	c = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || c < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&a, &len) ||
	    connect(c, (struct sockaddr *)&a, sizeof(a))) {
		perror("tcploop: loopback connection");
		return 1;
	}
	s = accept(l, NULL, NULL);
	if (s < 0) {
		perror("tcploop: accept");
		return 1;
	}
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	memset(buf, 'x', sizeof(buf));
	for (end = now_s() + secs; now_s() < end;) {
		ssize_t w = write(c, buf, sizeof(buf)), r, got = 0;
		int e = eventfd(0, 0);

		if (e < 0 || close(e)) {
			perror("tcploop: eventfd");
			return 1;
		}
		if (w <= 0) {
			perror("tcploop: write");
			return 1;
		}
		while (got < w) {
			r = read(s, buf, sizeof(buf));
			if (r <= 0) {
				perror("tcploop: read");
				return 1;
			}
			got += r;
		}
		moved += (unsigned long long)w;
	}
	printf("moved %llu bytes\n", moved);
	return 0;
}
