// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Running a program as another user from files root opened (spawn.h).
 *
 * The one idea: nothing the child needs is reached by a path it must be
 * able to walk.  Root opens the executable and the libraries, checks the
 * descriptors, and the child gets them as descriptors.  Between fork and
 * exec the child only makes system calls; when one fails it writes the
 * step and the errno into a close-on-exec pipe, so the parent learns
 * either "exec happened" (end of file) or exactly what went wrong, and
 * can say it in one line instead of an exit status.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include "privs.h"
#include "spawn.h"

int spawn_user_get(struct spawn_user *u, const char *name)
{
	struct passwd *pw;

	memset(u, 0, sizeof(*u));
	u->lock_fd = -1;
	if (geteuid()) {
		u->uid = geteuid();
		u->gid = getegid();
		pw = getpwuid(u->uid);
		if (pw)
			snprintf(u->name, sizeof(u->name), "%s", pw->pw_name);
		else
			snprintf(u->name, sizeof(u->name), "uid %u", (unsigned int)u->uid);
		return 0;
	}
	pw = getpwnam(name);
	if (!pw || !pw->pw_uid)
		return -ENOENT;
	u->uid = pw->pw_uid;
	u->gid = pw->pw_gid;
	u->drop = true;
	snprintf(u->name, sizeof(u->name), "%s", name);
	return 0;
}

/* Mark in taken[] the ids of [min, max] that a process runs as: the four
 * uids and four gids of every /proc/N/status (a process gone meanwhile
 * is no one's). */
static void mark_running(unsigned char *taken, unsigned int min, unsigned int max)
{
	char path[300], line[256];
	unsigned int id[4];
	struct dirent *e;
	DIR *proc;
	FILE *f;
	int i;

	proc = opendir("/proc");
	if (!proc)
		return;
	while ((e = readdir(proc))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/status", e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "Uid: %u %u %u %u", &id[0], &id[1], &id[2], &id[3]) != 4 &&
			    sscanf(line, "Gid: %u %u %u %u", &id[0], &id[1], &id[2], &id[3]) != 4)
				continue;
			for (i = 0; i < 4; i++)
				if (id[i] >= min && id[i] <= max)
					taken[id[i] - min] = 1;
		}
		fclose(f);
	}
	closedir(proc);
}

/* Whether uid is anyone's already: an account, a group, systemd's lease. */
static bool named(uid_t uid)
{
	char path[64];

	if (getpwuid(uid) || getgrgid((gid_t)uid))
		return true;
	snprintf(path, sizeof(path), "/run/systemd/dynamic-uid/%u", (unsigned int)uid);
	if (!access(path, F_OK))
		return true;
	snprintf(path, sizeof(path), "/run/systemd/dynamic-uid/direct:%u", (unsigned int)uid);
	return !access(path, F_OK);
}

/* The lock of uid in dir (its fd), -EWOULDBLOCK when another holds it. */
static int lock_uid(int dir, uid_t uid)
{
	char name[16];
	int fd;

	snprintf(name, sizeof(name), "%u", (unsigned int)uid);
	fd = openat(dir, name, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		close(fd);
		return -EWOULDBLOCK;
	}
	return fd;
}

int spawn_user_own(struct spawn_user *u, const char *lockdir, uid_t min, uid_t max)
{
	unsigned int start = 0, span, i;
	unsigned char *taken;
	int dir, fd = -1;
	uid_t uid;

	if (geteuid())
		return spawn_user_get(u, NULL);
	if (!min || max < min)
		return -EINVAL;
	span = max - min + 1;
	taken = calloc(span, 1);
	if (!taken)
		return -ENOMEM;
	mark_running(taken, min, max);
	/* a random start: two daemons seldom try the same uid first */
	if (getrandom(&start, sizeof(start), GRND_NONBLOCK) != sizeof(start))
		start = (unsigned int)getpid() * 2654435761u;
	if (mkdir(lockdir, 0700) && errno != EEXIST)
		dir = -1;
	else
		dir = open(lockdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	for (i = 0; i < span; i++) {
		uid = min + (start + i) % span;
		if (taken[uid - min] || named(uid))
			continue;
		if (dir >= 0) {
			fd = lock_uid(dir, uid);
			if (fd == -EWOULDBLOCK)
				continue;
		}
		memset(u, 0, sizeof(*u));
		u->uid = uid;
		u->gid = (gid_t)uid;
		u->drop = true;
		u->lock_fd = fd >= 0 ? fd : -1;
		snprintf(u->name, sizeof(u->name), "uid %u", (unsigned int)uid);
		break;
	}
	if (dir >= 0)
		close(dir);
	free(taken);
	return i < span ? 0 : -EAGAIN;
}

void spawn_user_release(struct spawn_user *u)
{
	if (u->lock_fd >= 0)
		close(u->lock_fd);
	u->lock_fd = -1;
}

static const char *errname(int err)
{
	const char *s = strerrorname_np(err);

	return s ? s : "unknown errno";
}

int spawn_open(struct spawn_file *f, const char *path, const struct spawn_user *u, int mode,
	       char *why, size_t n)
{
	const char *untrusted = NULL;
	struct stat st;
	int fd, err;

	f->fd = -1;
	snprintf(f->path, sizeof(f->path), "%s", path);
	/* as root: a directory above it that u cannot search is no obstacle */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		err = -errno;
		snprintf(why, n, "cannot open it: %s (%s)", strerror(-err), errname(-err));
		return err;
	}
	err = privs_check_opened(fd, path, &untrusted);
	if (err) {
		if (err == -EPERM)
			snprintf(why, n, "%s (it must be root's and writable by root alone)",
				 untrusted);
		else
			snprintf(why, n, "cannot check it: %s (%s)", strerror(-err), errname(-err));
		close(fd);
		return err;
	}
	if (fstat(fd, &st)) {
		err = -errno;
		snprintf(why, n, "cannot check it: %s (%s)", strerror(-err), errname(-err));
		close(fd);
		return err;
	}
	if (u->drop && !privs_user_may(&st, u->uid, u->gid, mode)) {
		snprintf(why, n, "it is not %s by %s (mode %04o, owner uid %u) (EACCES)",
			 mode & X_OK ? "executable" : "readable", u->name,
			 (unsigned int)(st.st_mode & 07777), (unsigned int)st.st_uid);
		close(fd);
		return -EACCES;
	}
	f->fd = fd;
	snprintf(f->fdpath, sizeof(f->fdpath), "/proc/self/fd/%d", fd);
	return 0;
}

void spawn_close(struct spawn_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
}

char **spawn_env(char *const *environ_, const char *const *drop, const char *const *add)
{
	size_t ne = 0, na = 0, i, j, k = 0;
	char **env;

	while (environ_ && environ_[ne])
		ne++;
	while (add && add[na])
		na++;
	env = calloc(ne + na + 1, sizeof(*env));
	if (!env)
		return NULL;
	for (i = 0; i < ne; i++) {
		bool keep = true;

		for (j = 0; drop && drop[j] && keep; j++) {
			size_t l = strlen(drop[j]);

			keep = !(!strncmp(environ_[i], drop[j], l) && environ_[i][l] == '=');
		}
		/* a name added replaces the one inherited */
		for (j = 0; j < na && keep; j++) {
			const char *eq = strchr(add[j], '=');
			size_t l = eq ? (size_t)(eq - add[j]) : strlen(add[j]);

			keep = !(!strncmp(environ_[i], add[j], l) && environ_[i][l] == '=');
		}
		if (keep)
			env[k++] = environ_[i];
	}
	for (j = 0; j < na; j++)
		env[k++] = (char *)add[j];
	env[k] = NULL;
	return env;
}

/* What the child reports before _exit when a step fails. */
enum spawn_step {
	STEP_SIGNALS,
	STEP_NICE,
	STEP_GROUP,
	STEP_USER,
	STEP_PDEATH,
	STEP_STDOUT,
	STEP_PASS,
	STEP_CWD,
	STEP_EXEC,
};

struct spawn_fail {
	int step;
	int err;
};

static void __attribute__((noreturn)) child_fail(int pfd, int step)
{
	struct spawn_fail f = { step, errno };
	ssize_t r;

	r = write(pfd, &f, sizeof(f));
	(void)r;
	_exit(127);
}

static void __attribute__((noreturn)) child(const struct spawn_req *r, pid_t parent, int pfd)
{
	const struct spawn_user *u = r->user;
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigset_t none;
	int i;

	/* the daemon blocks its stop signals (it reads them from a signalfd)
	 * and ignores SIGPIPE: exec would keep both */
	sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, &none, NULL) || sigaction(SIGPIPE, &dfl, NULL))
		child_fail(pfd, STEP_SIGNALS);
	/* the daemon's raised priority (--nice) is its own, not the
	 * program's it starts */
	errno = 0;
	if (getpriority(PRIO_PROCESS, 0) < 0 && !errno && setpriority(PRIO_PROCESS, 0, 0))
		child_fail(pfd, STEP_NICE);
	if (r->own_group && setpgid(0, 0))
		child_fail(pfd, STEP_GROUP);
	if (u && u->drop) {
		if (setgroups(0, NULL) || setgid(u->gid) || setuid(u->uid))
			child_fail(pfd, STEP_USER);
		if (!setuid(0)) {
			errno = EPERM;
			child_fail(pfd, STEP_USER);
		}
	}
	/* after the change of uid, which clears it */
	if (r->die_with_parent) {
		if (prctl(PR_SET_PDEATHSIG, SIGTERM))
			child_fail(pfd, STEP_PDEATH);
		if (getppid() != parent) {	/* it died before we asked */
			errno = ESRCH;
			child_fail(pfd, STEP_PDEATH);
		}
	}
	if (r->stdout_fd >= 0 && dup2(r->stdout_fd, STDOUT_FILENO) < 0)
		child_fail(pfd, STEP_STDOUT);
	for (i = 0; r->pass && r->pass[i]; i++)
		if (r->pass[i]->fd >= 0 && fcntl(r->pass[i]->fd, F_SETFD, 0))
			child_fail(pfd, STEP_PASS);
	/* the caller's directory may be one the user cannot search */
	if (chdir("/"))
		child_fail(pfd, STEP_CWD);
	fexecve(r->exe->fd, r->argv, r->envp);
	child_fail(pfd, STEP_EXEC);
}

/* Why exec of the file at fd failed with err, as user u. */
static void exec_why(const struct spawn_req *r, int err, char *why, size_t n)
{
	const struct spawn_user *u = r->user;
	struct statvfs vfs;
	struct stat st;

	if (err == EACCES && !fstat(r->exe->fd, &st) && u &&
	    !privs_user_may(&st, u->uid, u->gid, X_OK))
		snprintf(why, n, "it is not executable by %s (mode %04o, owner uid %u)", u->name,
			 (unsigned int)(st.st_mode & 07777), (unsigned int)st.st_uid);
	else if (err == EACCES && !fstatvfs(r->exe->fd, &vfs) && (vfs.f_flag & ST_NOEXEC))
		snprintf(why, n, "its file system is mounted noexec");
	else if (err == ENOEXEC)
		snprintf(why, n, "it is not a program this kernel can run");
	else if (err == ENOENT)
		snprintf(why, n, "its program interpreter is missing, or it is a script");
	else
		snprintf(why, n, "exec failed: %s", strerror(err));
}

int spawn_run(const struct spawn_req *r, pid_t *pid, char *why, size_t n)
{
	static const char *const steps[] = {
		[STEP_SIGNALS] = "cannot reset its signals",
		[STEP_NICE] = "cannot reset its scheduling priority",
		[STEP_GROUP] = "cannot give it a process group of its own",
		[STEP_USER] = "cannot change to the user",
		[STEP_PDEATH] = "cannot tie it to the daemon's life (PR_SET_PDEATHSIG)",
		[STEP_STDOUT] = "cannot give it its stdout",
		[STEP_PASS] = "cannot keep its libraries open across exec",
		[STEP_CWD] = "cannot change to /",
	};
	struct spawn_fail f;
	pid_t parent = getpid(), c;
	int pfd[2], status;
	char what[256];
	ssize_t got;

	if (pipe2(pfd, O_CLOEXEC)) {
		snprintf(why, n, "cannot make a pipe: %s (%s)", strerror(errno), errname(errno));
		return -errno;
	}
	c = fork();
	if (c < 0) {
		int err = errno;

		close(pfd[0]);
		close(pfd[1]);
		snprintf(why, n, "cannot fork: %s (%s)", strerror(err), errname(err));
		return -err;
	}
	if (!c) {
		close(pfd[0]);
		child(r, parent, pfd[1]);
	}
	close(pfd[1]);
	do
		got = read(pfd[0], &f, sizeof(f));
	while (got < 0 && errno == EINTR);
	close(pfd[0]);
	if (got == 0) {		/* the pipe closed at exec */
		*pid = c;
		return 0;
	}
	while (waitpid(c, &status, 0) < 0 && errno == EINTR)
		;
	if (got != (ssize_t)sizeof(f)) {
		snprintf(why, n, "its child died before exec (EIO)");
		return -EIO;
	}
	if (f.step == STEP_EXEC)
		exec_why(r, f.err, what, sizeof(what));
	else if (f.step == STEP_USER && r->user)
		snprintf(what, sizeof(what), "cannot change to %s (uid %u, gid %u): %s", r->user->name,
			 (unsigned int)r->user->uid, (unsigned int)r->user->gid, strerror(f.err));
	else if (f.step >= 0 && f.step < STEP_EXEC)
		snprintf(what, sizeof(what), "%s: %s", steps[f.step], strerror(f.err));
	else
		snprintf(what, sizeof(what), "step %d failed: %s", f.step, strerror(f.err));
	snprintf(why, n, "%s (%s)", what, errname(f.err));
	return -(f.err ? f.err : EIO);
}
