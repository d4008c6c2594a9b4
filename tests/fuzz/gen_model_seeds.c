// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Seeds of fuzz_model: tiny llama2.c checkpoints written by kvref's own
 * model_save, one with the classifier tied to the embeddings, one untied
 * with grouped-query attention, and a header alone; and one in the
 * harness's padded form ('P', a header, floats it repeats to the size).  Build and run from the
 * repository root:
 *   cc -Itools/kvref tests/fuzz/gen_model_seeds.c tools/kvref/model.c \
 *      tools/kvref/kvcache.c -lm -lpthread -o /tmp/gen_model_seeds
 *   /tmp/gen_model_seeds tests/fuzz/corpus/model
 */
#include <stdio.h>
#include "model.h"

static int save(const char *dir, const char *name, const struct kv_config *c, uint64_t seed)
{
	struct kv_model m;
	char path[4096];
	int err;

	err = model_init_random(&m, c, seed);
	if (err)
		return err;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	err = model_save(&m, path);
	model_release(&m);
	return err;
}

int main(int argc, char **argv)
{
	struct kv_config tied = { 2, 2, 1, 1, 1, 3, 2 };
	struct kv_config untied = { 4, 3, 2, 2, 1, -5, 4 };
	struct kv_config gqa = { 8, 16, 2, 4, 2, -7, 8 };
	float fill[4] = { 0.5f, -0.25f, 1.0f, 0.125f };
	struct kv_config dflt;
	char path[4096];
	FILE *f;

	if (argc != 2) {
		fprintf(stderr, "usage: gen_model_seeds DIR\n");
		return 2;
	}
	if (save(argv[1], "tied", &tied, 1) || save(argv[1], "untied", &untied, 2))
		return 1;
	snprintf(path, sizeof(path), "%s/padded-gqa", argv[1]);
	f = fopen(path, "wb");
	if (!f || fputc('P', f) == EOF || fwrite(&gqa, sizeof(gqa), 1, f) != 1 ||
	    fwrite(fill, sizeof(fill), 1, f) != 1 || fclose(f))
		return 1;
	kv_config_default(&dflt);
	snprintf(path, sizeof(path), "%s/header-only", argv[1]);
	f = fopen(path, "wb");
	if (!f || fwrite(&dflt, sizeof(dflt), 1, f) != 1 || fclose(f))
		return 1;
	return 0;
}
