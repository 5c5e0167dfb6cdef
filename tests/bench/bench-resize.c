/*
 * bench-resize.c - decode + RGB + resize throughput of lib/prep/image.c,
 * the work tfk-images does per file, without the record writing.
 *
 *   bench-resize [-j N] [--exact] DIR SIZE
 *
 * Reads every file under DIR into memory first (so the disk is not
 * measured), then decodes each to RGB and resizes it to SIZE x SIZE
 * bilinear with tfk_img_decode_resize on N threads (files i = t mod N),
 * and prints "IMAGES_PER_SECOND" on stdout. --exact turns off JPEG DCT
 * scaling (the TF-identical path); the default lets JPEGs decode at
 * 1/2, 1/4 or 1/8 when the target allows.
 */
#include "prep/image.h"
#include "prep/resize.h"
#include "util/progress.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct file {
	uint8_t *p;
	size_t n;
};

static struct file *files;
static size_t n_files, cap_files;
static int size = 180, threads = 1, exact;
static int failed;

static void add_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[4096];
		struct stat st;
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (stat(path, &st))
			continue;
		if (S_ISDIR(st.st_mode)) {
			add_dir(path);
			continue;
		}
		if (n_files == cap_files) {
			cap_files = cap_files ? cap_files * 2 : 256;
			files = realloc(files, cap_files * sizeof(*files));
		}
		f = fopen(path, "rb");
		if (!f)
			continue;
		files[n_files].p = malloc((size_t)st.st_size + 1);
		files[n_files].n = fread(files[n_files].p, 1,
					 (size_t)st.st_size, f);
		fclose(f);
		n_files++;
	}
	closedir(d);
}

static void *work(void *arg)
{
	long t = (long)arg;
	struct tfk_img img;
	struct tfk_img_opts io = TFK_IMG_OPTS_DEFAULT;
	struct tfk_img_resize ro = { 0, 0, TFK_RESIZE_BILINEAR, 0, 0, 0, 0 };
	uint8_t *out = malloc((size_t)size * size * 3);
	struct tfk_err err;
	size_t i;

	io.channels = 3;
	ro.out_w = ro.out_h = size;
	ro.fast = !exact;
	tfk_img_init(&img);
	for (i = (size_t)t; i < n_files; i += (size_t)threads)
		if (tfk_img_decode_resize(&img, files[i].p, files[i].n, &io,
					  &ro, out, &err)) {
			fprintf(stderr, "bench-resize: file %zu: %s\n", i,
				err.msg);
			failed = 1;
		}
	tfk_img_release(&img);
	free(out);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t tid[64];
	double t0, dt;
	long t;
	int i;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-j") && i + 1 < argc)
			threads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--exact"))
			exact = 1;
	}
	if (argc - i != 2 || threads < 1 || threads > 64) {
		fprintf(stderr, "usage: bench-resize [-j N] [--exact] DIR"
			" SIZE\n");
		return 2;
	}
	size = atoi(argv[i + 1]);
	add_dir(argv[i]);
	if (!n_files || size < 1) {
		fprintf(stderr, "bench-resize: no files in %s\n", argv[i]);
		return 1;
	}
	t0 = tfk_now();
	for (t = 0; t < threads; t++)
		pthread_create(&tid[t], NULL, work, (void *)t);
	for (t = 0; t < threads; t++)
		pthread_join(tid[t], NULL);
	dt = tfk_now() - t0;
	printf("%.1f\n", (double)n_files / dt);
	return failed;
}
