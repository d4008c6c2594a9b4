// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the cgroup path and container id per process (daemon/cgroup.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "helpers/tmpdir.h"
#include "../daemon/cgroup.h"
#include "../bpf/cachescope.h"

#define ID64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define UID "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
#define UID_ "0f1e2d3c_4b5a_6978_8796_a5b4c3d2e1f0"

static void cgroup_parse__v2_line__its_path(void **state)
{
	char path[256];

	(void)state;
	assert_int_equal(cgroup_parse("0::/system.slice/nginx.service\n", path, sizeof(path)), 0);
	assert_string_equal(path, "/system.slice/nginx.service");
	/* hybrid: the v1 lines first, the v2 line last, no newline at the end */
	assert_int_equal(cgroup_parse("4:memory:/user.slice\n1:name=systemd:/user.slice\n0::/x/y",
				      path, sizeof(path)), 0);
	assert_string_equal(path, "/x/y");
	assert_int_equal(cgroup_parse("0::/\n", path, sizeof(path)), 0);
	assert_string_equal(path, "/");
	/* "10::" is no v2 line */
	assert_int_equal(cgroup_parse("10::/a\n0::/b\n", path, sizeof(path)), 0);
	assert_string_equal(path, "/b");
}

static void cgroup_parse__v1_only__enoent(void **state)
{
	char path[16] = "untouched";

	(void)state;
	assert_int_equal(cgroup_parse("4:memory:/a\n1:name=systemd:/a\n", path, sizeof(path)), -ENOENT);
	assert_int_equal(cgroup_parse("", path, sizeof(path)), -ENOENT);
	assert_string_equal(path, "untouched");
}

static void cgroup_container__runtime_scopes__their_id(void **state)
{
	char id[80];

	(void)state;
	assert_int_equal(cgroup_container("/system.slice/docker-" ID64 ".scope", id, sizeof(id)), 0);
	assert_string_equal(id, ID64);
	assert_int_equal(cgroup_container("/docker/" ID64, id, sizeof(id)), 0);
	assert_string_equal(id, ID64);
	assert_int_equal(cgroup_container("/machine.slice/libpod-" ID64 ".scope/container", id,
					  sizeof(id)), 0);
	assert_string_equal(id, ID64);
	assert_int_equal(cgroup_container("/system.slice/crio-" ID64 ".scope", id, sizeof(id)), 0);
	assert_string_equal(id, ID64);
}

static void cgroup_container__kubepods__container_else_pod(void **state)
{
	char id[80];

	(void)state;
	/* systemd driver: the container inside its pod's slice */
	assert_int_equal(cgroup_container("/kubepods.slice/kubepods-burstable.slice/"
					  "kubepods-burstable-pod" UID_ ".slice/"
					  "cri-containerd-" ID64 ".scope", id, sizeof(id)), 0);
	assert_string_equal(id, ID64);
	/* only the pod: its uid, with systemd's '_' read as '-' */
	assert_int_equal(cgroup_container("/kubepods.slice/kubepods-besteffort.slice/"
					  "kubepods-besteffort-pod" UID_ ".slice", id, sizeof(id)), 0);
	assert_string_equal(id, "pod:" UID);
	assert_int_equal(cgroup_container("/kubepods.slice/kubepods-pod" UID_ ".slice", id,
					  sizeof(id)), 0);
	assert_string_equal(id, "pod:" UID);
	/* cgroupfs driver: /kubepods/CLASS/podUID/ID */
	assert_int_equal(cgroup_container("/kubepods/burstable/pod" UID "/" ID64, id, sizeof(id)), 0);
	assert_string_equal(id, ID64);
	assert_int_equal(cgroup_container("/kubepods/pod" UID, id, sizeof(id)), 0);
	assert_string_equal(id, "pod:" UID);
}

static void cgroup_container__look_alikes__enoent(void **state)
{
	char id[80] = "untouched";

	(void)state;
	assert_int_equal(cgroup_container("/", id, sizeof(id)), -ENOENT);
	assert_int_equal(cgroup_container("", id, sizeof(id)), -ENOENT);
	assert_int_equal(cgroup_container("/system.slice/docker.service", id, sizeof(id)), -ENOENT);
	/* the monitors beside a container are not in it */
	assert_int_equal(cgroup_container("/machine.slice/libpod-conmon-" ID64 ".scope", id,
					  sizeof(id)), -ENOENT);
	assert_int_equal(cgroup_container("/system.slice/crio-conmon-" ID64 ".scope", id,
					  sizeof(id)), -ENOENT);
	/* an id too short, one in capitals, a bare id not under docker or a pod */
	assert_int_equal(cgroup_container("/system.slice/docker-0123abcd.scope", id, sizeof(id)),
			 -ENOENT);
	assert_int_equal(cgroup_container("/docker/0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef",
					  id, sizeof(id)), -ENOENT);
	assert_int_equal(cgroup_container("/user.slice/" ID64, id, sizeof(id)), -ENOENT);
	/* pod look-alikes outside kubepods, a uid of the wrong length */
	assert_int_equal(cgroup_container("/pod" UID, id, sizeof(id)), -ENOENT);
	assert_int_equal(cgroup_container("/kubepods.slice/kubepods-pod0f1e.slice", id, sizeof(id)),
			 -ENOENT);
	assert_string_equal(id, "untouched");
}

/* ---- the cache, over a /proc copy in a temporary folder ---- */

static char proc[64];

static void write_cgroup(uint32_t tgid, const char *text)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u", proc, tgid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%u/cgroup", proc, tgid);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void remove_cgroup(uint32_t tgid)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%u/cgroup", proc, tgid);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%u", proc, tgid);
	rmdir(path);
}

static int proc_setup(void **state)
{
	(void)state;
	return tmpdir_make(proc, sizeof(proc), "cgroup");
}

static int proc_teardown(void **state)
{
	(void)state;
	return tmpdir_remove(proc);
}

static void cgcache_get__first_use__read_with_container(void **state)
{
	const struct cgroup_info *ci;
	struct cgcache *c = cgcache_new(proc, 1000);

	(void)state;
	assert_non_null(c);
	write_cgroup(100, "1:name=systemd:/\n0::/system.slice/docker-" ID64 ".scope\n");
	write_cgroup(101, "0::/user.slice/session-1.scope\n");
	ci = cgcache_get(c, 100, 5);
	assert_non_null(ci);
	assert_string_equal(ci->path, "/system.slice/docker-" ID64 ".scope");
	assert_string_equal(ci->container, ID64);
	ci = cgcache_get(c, 101, 5);
	assert_string_equal(ci->path, "/user.slice/session-1.scope");
	assert_string_equal(ci->container, "");
	/* no such process: known as nothing */
	ci = cgcache_get(c, 102, 5);
	assert_non_null(ci);
	assert_string_equal(ci->path, "");
	/* ids that are no process */
	assert_null(cgcache_get(c, 0, 5));
	assert_null(cgcache_get(c, CS_TGID_OTHER, 5));
	assert_null(cgcache_get(c, CS_TGID_FAMILY | 7, 5));
	cgcache_free(c);
	remove_cgroup(100);
	remove_cgroup(101);
}

static void cgcache_get__moved__seen_after_refresh_age_only(void **state)
{
	const struct cgroup_info *ci;
	struct cgcache *c = cgcache_new(proc, 1000);

	(void)state;
	write_cgroup(200, "0::/a\n");
	assert_string_equal(cgcache_get(c, 200, 10)->path, "/a");
	write_cgroup(200, "0::/system.slice/crio-" ID64 ".scope\n");
	/* cached: no read before the refresh age */
	ci = cgcache_get(c, 200, 1009);
	assert_string_equal(ci->path, "/a");
	assert_string_equal(ci->container, "");
	ci = cgcache_get(c, 200, 1010);
	assert_string_equal(ci->path, "/system.slice/crio-" ID64 ".scope");
	assert_string_equal(ci->container, ID64);
	/* gone: what was read last stays */
	remove_cgroup(200);
	ci = cgcache_get(c, 200, 5000);
	assert_string_equal(ci->path, "/system.slice/crio-" ID64 ".scope");
	assert_string_equal(ci->container, ID64);
	cgcache_free(c);
}

static void cgcache_get__many_processes__table_refills(void **state)
{
	struct cgcache *c = cgcache_new(proc, 1000);
	uint32_t t;

	(void)state;
	write_cgroup(300, "0::/kept\n");
	/* more tgids than the table holds: it empties and fills again, and
	 * every answer is still right */
	for (t = 1000; t < 1000 + 20000; t++)
		assert_non_null(cgcache_get(c, t, 1));
	assert_string_equal(cgcache_get(c, 300, 1)->path, "/kept");
	cgcache_free(c);
	cgcache_free(NULL);
	remove_cgroup(300);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cgroup_parse__v2_line__its_path),
		cmocka_unit_test(cgroup_parse__v1_only__enoent),
		cmocka_unit_test(cgroup_container__runtime_scopes__their_id),
		cmocka_unit_test(cgroup_container__kubepods__container_else_pod),
		cmocka_unit_test(cgroup_container__look_alikes__enoent),
		cmocka_unit_test(cgcache_get__first_use__read_with_container),
		cmocka_unit_test(cgcache_get__moved__seen_after_refresh_age_only),
		cmocka_unit_test(cgcache_get__many_processes__table_refills),
	};

	return cmocka_run_group_tests_name("cgroup", tests, proc_setup, proc_teardown);
}
