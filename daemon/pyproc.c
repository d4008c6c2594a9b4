// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Python processes (pyproc.h): the interpreter among a process's mappings,
 * its version and where its _PyRuntime lies, read from the ELF file with
 * libelf.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "pyproc.h"
#include "stacks.h"

/* The value of symbol name in the symbol tables of e, or 0. */
static uint64_t symbol(Elf *e, const char *name)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn))) {
		Elf_Data *data;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) ||
		    !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; data && i < n; i++) {
			const char *s;
			GElf_Sym sym;

			if (!gelf_getsym(data, (int)i, &sym) || !sym.st_value)
				continue;
			s = elf_strptr(e, sh.sh_link, sym.st_name);
			if (s && !strcmp(s, name))
				return sym.st_value;
		}
	}
	return 0;
}

/* The file offset of address vaddr (in a PT_LOAD's file bytes), or -1. */
static int64_t file_offset(Elf *e, uint64_t vaddr)
{
	size_t i, n;
	GElf_Phdr ph;

	if (elf_getphdrnum(e, &n))
		return -1;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr + 4 <= ph.p_vaddr + ph.p_filesz)
			return (int64_t)(ph.p_offset + (vaddr - ph.p_vaddr));
	}
	return -1;
}

/* The load bias of a file whose bytes at offset off are mapped at start. */
static int load_bias(Elf *e, uint64_t start, uint64_t off, uint64_t *bias)
{
	size_t i, n;
	GElf_Ehdr eh;
	GElf_Phdr ph;

	if (!gelf_getehdr(e, &eh))
		return -EINVAL;
	if (eh.e_type == ET_EXEC) {
		*bias = 0;
		return 0;
	}
	if (elf_getphdrnum(e, &n))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (off >= ph.p_offset && off < ph.p_offset + ph.p_filesz) {
			*bias = start - (ph.p_vaddr + (off - ph.p_offset));
			return 0;
		}
	}
	return -ENOENT;
}

int pyproc_runtime(const char *path, uint64_t start, uint64_t off, uint64_t *runtime)
{
	uint64_t rt, ver_at, bias;
	uint32_t version = 0;
	int64_t at;
	int fd, err = -ENOENT;
	Elf *e;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e)
		goto out;
	rt = symbol(e, "_PyRuntime");
	ver_at = symbol(e, "Py_Version");
	if (!rt || !ver_at)
		goto out;
	at = file_offset(e, ver_at);
	if (at < 0 || pread(fd, &version, sizeof(version), at) != sizeof(version))
		goto out;
	if (version >> 16 != 0x030b) {	/* the layout stack.bpf.h reads is 3.11's */
		err = -ENOTSUP;
		goto out;
	}
	if (load_bias(e, start, off, &bias))
		goto out;
	*runtime = rt + bias;
	err = 0;
out:
	if (e)
		elf_end(e);
	close(fd);
	return err;
}

bool pyproc_candidate(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "python3", 7) || !strncmp(base, "libpython3", 10);
}

int pyproc_find(char *maps, uint64_t *runtime)
{
	uint64_t start, off;
	char *path;
	int err = -ENOENT;

	while (stacks_maps_next(&maps, &start, &off, &path)) {
		if (!pyproc_candidate(path))
			continue;
		err = pyproc_runtime(path, start, off, runtime);
		if (!err || err == -ENOTSUP)
			return err;
	}
	return err;
}
