// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pingpong: two threads pinned to different CPUs exchange small messages
 * over a Unix socketpair, so every skb is allocated on the sender's CPU and
 * freed on the receiver's: the remote-free pattern of false sharing.  With
 * --procs the second side is a process of its own (forked), as a server
 * and its client: the same remote frees, by another program.
 *
 *   pingpong SECONDS [CPU_A CPU_B] [--procs]
 *
 * Prints "pid PID" first (the first side's process) and "messages N" at
 * the end (with --procs, those the first side answered).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
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
	pid_t child = -1;
	bool procs;
	double secs;
	int sv[2];

	procs = argc > 2 && !strcmp(argv[argc - 1], "--procs");
	argc -= procs;
	if (argc != 2 && argc != 4) {
		fprintf(stderr, "usage: pingpong SECONDS [CPU_A CPU_B] [--procs]\n");
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
	if (procs) {
		child = fork();
		if (child < 0) {
			fprintf(stderr, "pingpong: fork: %s\n", strerror(errno));
			return 1;
		}
		if (!child) {	/* the second side, until the first shuts down */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			close(sv[0]);
			run(&b);
			_exit(0);
		}
		close(sv[1]);
	}
	pthread_create(&ta, NULL, run, &a);
	if (!procs)
		pthread_create(&tb, NULL, run, &b);
	nanosleep(&(struct timespec){ (time_t)secs, (long)((secs - (time_t)secs) * 1e9) }, NULL);
	stop = 1;
	shutdown(sv[0], SHUT_RDWR);
	if (!procs)
		shutdown(sv[1], SHUT_RDWR);
	pthread_join(ta, NULL);
	if (procs)
		waitpid(child, NULL, 0);
	else
		pthread_join(tb, NULL);
	printf("messages %ld\n", a.count + b.count);
	return 0;
}
