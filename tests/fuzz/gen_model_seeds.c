// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Seeds of fuzz_model: tiny llama2.c checkpoints written by kvref's own
 * model_save, one with the classifier tied to the embeddings, one untied
 * with grouped-query attention, and a header alone.  Build and run from the
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
	struct kv_config dflt;
	char path[4096];
	FILE *f;

	if (argc != 2) {
		fprintf(stderr, "usage: gen_model_seeds DIR\n");
		return 2;
	}
	if (save(argv[1], "tied", &tied, 1) || save(argv[1], "untied", &untied, 2))
		return 1;
	kv_config_default(&dflt);
	snprintf(path, sizeof(path), "%s/header-only", argv[1]);
	f = fopen(path, "wb");
	if (!f || fwrite(&dflt, sizeof(dflt), 1, f) != 1 || fclose(f))
		return 1;
	return 0;
}
