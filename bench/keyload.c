// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * keyload: many busy keys at once, for measuring the daemon's memory at a
 * full key budget.  A key is (cache, process), so keyload starts PROCS
 * long-lived processes, and each, every PERIOD_MS, makes and frees objects
 * of several slab caches: a pipe, an eventfd, a timerfd, an epoll
 * instance, a signalfd, a memfd, a UNIX and a UDP socket and a /proc file
 * (their files, dentries, inodes, socket structures and the kmalloc'ed
 * companions of each, some twenty caches).  The processes live beyond the
 * daemon's fold age, so each gets its keys apart.  It runs SECONDS, then
 * stops its processes and prints how many iterations they made.  With
 * --light an iteration only opens, reads and closes a file and makes and
 * closes an eventfd (issue 24's many-busy-processes load: 600 of them
 * every 20 ms is 30 000 iterations a second).
 *
 *   keyload PROCS PERIOD_MS SECONDS [--light]
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void closeif(int fd)
{
	if (fd >= 0)
		close(fd);
}

static void once(void)
{
	char buf[256];
	sigset_t set;
	int p[2], fd;

	if (!pipe(p)) {
		close(p[0]);
		close(p[1]);
	}
	closeif(eventfd(0, 0));
	closeif(timerfd_create(CLOCK_MONOTONIC, 0));
	closeif(epoll_create1(0));
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	closeif(signalfd(-1, &set, 0));
	closeif(memfd_create("keyload", 0));
	closeif(socket(AF_UNIX, SOCK_STREAM, 0));
	closeif(socket(AF_INET, SOCK_DGRAM, 0));
	fd = open("/proc/self/stat", O_RDONLY);
	if (fd >= 0) {
		if (read(fd, buf, sizeof(buf)) < 0)
			buf[0] = 0;
		close(fd);
	}
}

static void once_light(void)
{
	char buf[64];
	int fd = open("/etc/hostname", O_RDONLY);

	if (fd >= 0) {
		if (read(fd, buf, sizeof(buf)) < 0)
			buf[0] = 0;
		close(fd);
	}
	closeif(eventfd(0, 0));
}

static long parse(const char *what, const char *s, long min, long max)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*s == 0 || *end || v < min || v > max) {
		fprintf(stderr, "keyload: %s: want %ld to %ld, not '%s'\n", what, min, max, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	long procs, period_ms, seconds, i, total = 0;
	void (*work)(void) = once;
	struct timespec ts;
	pid_t *kids;
	long *count;

	if (argc == 5 && !strcmp(argv[4], "--light")) {
		work = once_light;
		argc--;
	}
	if (argc != 4) {
		fprintf(stderr, "usage: keyload PROCS PERIOD_MS SECONDS [--light]\n");
		return 2;
	}
	procs = parse("PROCS", argv[1], 1, 32768);
	period_ms = parse("PERIOD_MS", argv[2], 1, 60000);
	seconds = parse("SECONDS", argv[3], 1, 86400);
	kids = calloc(procs, sizeof(*kids));
	/* each child counts its iterations here (shared, one slot each) */
	count = mmap(NULL, procs * sizeof(*count), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!kids || count == MAP_FAILED) {
		fprintf(stderr, "keyload: out of memory\n");
		return 1;
	}
	for (i = 0; i < procs; i++) {
		kids[i] = fork();
		if (kids[i] < 0) {
			perror("keyload: fork");
			procs = i;
			break;
		}
		if (kids[i] == 0) {
			/* spread the processes over the period */
			long off_ms = i * period_ms / procs;

			ts.tv_sec = off_ms / 1000;
			ts.tv_nsec = off_ms % 1000 * 1000000L;
			nanosleep(&ts, NULL);
			ts.tv_sec = period_ms / 1000;
			ts.tv_nsec = period_ms % 1000 * 1000000L;
			for (;;) {
				work();
				count[i]++;
				nanosleep(&ts, NULL);
			}
		}
	}
	sleep(seconds);
	for (i = 0; i < procs; i++)
		kill(kids[i], SIGKILL);
	for (i = 0; i < procs; i++) {
		waitpid(kids[i], NULL, 0);
		total += count[i];
	}
	printf("keyload: %ld processes, %ld iterations in %ld s\n", procs, total, seconds);
	return 0;
}
