// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pingpong: two threads pinned to different CPUs exchange small messages
 * over a Unix socketpair, so every skb is allocated on the sender's CPU and
 * freed on the receiver's: the remote-free pattern of false sharing.
 *
 *   pingpong SECONDS [CPU_A CPU_B]
 *
 * Prints "pid PID" first and "messages N" at the end.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct side {
	int fd;
	int cpu;
	int first;	/* sends before it receives */
	long count;
};

static volatile int stop;

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
		fprintf(stderr, "pingpong: cannot pin to CPU %d\n", cpu);
}

static void *run(void *arg)
{
	struct side *s = arg;
	char msg[64];

	memset(msg, 'p', sizeof(msg));
	pin(s->cpu);
	if (s->first && write(s->fd, msg, sizeof(msg)) != sizeof(msg))
		return NULL;
	while (!stop) {
		if (read(s->fd, msg, sizeof(msg)) <= 0)
			break;
		if (write(s->fd, msg, sizeof(msg)) != sizeof(msg))
			break;
		s->count++;
	}
	shutdown(s->fd, SHUT_RDWR);
	return NULL;
}

int main(int argc, char **argv)
{
	struct side a = { .cpu = 0, .first = 1 }, b = { .cpu = 1 };
	pthread_t ta, tb;
	double secs;
	int sv[2];

	if (argc != 2 && argc != 4) {
		fprintf(stderr, "usage: pingpong SECONDS [CPU_A CPU_B]\n");
		return 2;
	}
	secs = atof(argv[1]);
	if (argc == 4) {
		a.cpu = atoi(argv[2]);
		b.cpu = atoi(argv[3]);
	}
	if (secs <= 0) {
		fprintf(stderr, "pingpong: SECONDS must be positive\n");
		return 2;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		fprintf(stderr, "pingpong: socketpair: %s\n", strerror(errno));
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);	/* the peer shuts down first at the end */
	a.fd = sv[0];
	b.fd = sv[1];
	printf("pid %d\n", getpid());
	fflush(stdout);
	pthread_create(&ta, NULL, run, &a);
	pthread_create(&tb, NULL, run, &b);
	nanosleep(&(struct timespec){ (time_t)secs, (long)((secs - (time_t)secs) * 1e9) }, NULL);
	stop = 1;
	shutdown(sv[0], SHUT_RDWR);
	shutdown(sv[1], SHUT_RDWR);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	printf("messages %ld\n", a.count + b.count);
	return 0;
}
