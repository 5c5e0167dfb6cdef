/*
 * t-shardw.c - sharded output: names, round-robin and by-size splits,
 * compression, nothing under final names before close or after a
 * failure, stale shards of an earlier run, stdout, failed allocations,
 * and the converters' option checks.
 *
 * Shards are read back with the TFRecord reader (itself checked against
 * TensorFlow-written files in t-record) and their bytes counted exactly:
 * a record of L payload bytes takes L + 16 bytes on disk.
 */
#include "data/shardw.h"
#include "io/record.h"
#include "util/alloc.h"
#include "tap.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[512];

static void fresh_dir(const char *name)
{
	snprintf(dir, sizeof(dir), "%s/%s", tap_tmpdir(), name);
	mkdir(dir, 0777);
}

static char *path(const char *name)
{
	static char p[8][768];
	static int k;

	k = (k + 1) % 8;
	snprintf(p[k], sizeof(p[k]), "%s/%s", dir, name);
	return p[k];
}

/* Names in dir, sorted, joined by spaces; hidden ones too when all. */
static const char *listing(int all)
{
	static char out[4096];
	char *names[256];
	int n = 0, i, j;
	struct dirent *e;
	DIR *d = opendir(dir);

	out[0] = 0;
	if (!d)
		return "<no dir>";
	while ((e = readdir(d)) && n < 256) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (!all && e->d_name[0] == '.')
			continue;
		names[n++] = strdup(e->d_name);
	}
	closedir(d);
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
			char *t = names[j];

			names[j] = names[j - 1];
			names[j - 1] = t;
		}
	for (i = 0; i < n; i++) {
		if (i)
			strcat(out, " ");
		strcat(out, names[i]);
		free(names[i]);
	}
	return out;
}

/* Payload of record i: its number as text, padded to len bytes. */
static size_t payload(long i, size_t len, char *buf)
{
	memset(buf, 'a' + (int)(i % 26), len);
	snprintf(buf, len, "rec%ld", i);
	return len;
}

/* Read a shard back: the record numbers it holds, in order, into got;
 * returns the count or -1 on a read error. */
static long read_back(const char *p, long *got, long max, int comp)
{
	struct tfk_rec_reader *r;
	struct tfk_rec rec;
	struct tfk_err err;
	long n = 0;
	int rc;

	if (tfk_rec_open(&r, p, comp, 0, &err))
		return -1;
	while ((rc = tfk_rec_next(r, &rec, &err)) == 1) {
		if (n < max)
			got[n] = strtol((const char *)rec.data + 3, NULL, 10);
		n++;
	}
	tfk_rec_close(r);
	return rc ? -1 : n;
}

static long file_size(const char *p)
{
	struct stat st;

	return stat(p, &st) ? -1 : (long)st.st_size;
}

static int write_n(struct tfk_shardw *w, long n, size_t len)
{
	char buf[4096];
	struct tfk_err err;
	long i;

	for (i = 0; i < n; i++)
		if (tfk_shardw_write(w, buf, payload(i, len, buf), &err))
			return -1;
	return 0;
}

static void round_robin(void)
{
	struct tfk_shardw_opts o = { NULL, 0, 3, TFK_COMP_NONE };
	struct tfk_shardw *w;
	struct tfk_err err;
	long got[16], i, n;
	int good = 1;

	fresh_dir("rr");
	o.prefix = path("train");
	is_int(tfk_shardw_open(&w, &o, &err), 0, "round-robin: open");
	is_int(write_n(w, 10, 40), 0, "round-robin: 10 records written");
	is_int(tfk_shardw_records(w), 10, "round-robin: records counted");
	is_int(tfk_shardw_bytes(w), 10 * 56, "round-robin: framed bytes counted");
	is_int(tfk_shardw_shards(w), 3, "round-robin: 3 shards");
	is_str(listing(0), "", "round-robin: nothing under a final name before close");
	is_int(tfk_shardw_close(w, &err), 0, "round-robin: close");
	is_str(listing(1), "train-00000-of-00003.tfrecord "
	       "train-00001-of-00003.tfrecord train-00002-of-00003.tfrecord",
	       "round-robin: three shards, no temporaries left");
	for (i = 0; i < 3; i++) {
		char name[64];
		long j;

		snprintf(name, sizeof(name), "train-%05ld-of-00003.tfrecord", i);
		n = read_back(path(name), got, 16, TFK_COMP_NONE);
		is_int(n, i == 0 ? 4 : 3, "round-robin: shard %ld record count", i);
		for (j = 0; j < n; j++)
			if (got[j] != i + 3 * j)
				good = 0;
		is_int(file_size(path(name)), n * 56, "round-robin: shard %ld size", i);
	}
	ok(good, "round-robin: record i went to shard i %% 3, in order");
}

static void by_size(void)
{
	struct tfk_shardw_opts o = { NULL, 300, 0, TFK_COMP_NONE };
	struct tfk_shardw *w;
	struct tfk_err err;
	long got[16], i, n, all = 0;
	int good = 1;

	fresh_dir("size");
	o.prefix = path("d");
	is_int(tfk_shardw_open(&w, &o, &err), 0, "by size: open");
	/* 100-byte records frame to 116 bytes: 3 fill a 300-byte shard. */
	is_int(write_n(w, 10, 100), 0, "by size: 10 records");
	is_int(tfk_shardw_shards(w), 4, "by size: 4 shards so far");
	is_str(listing(0), "", "by size: nothing under a final name before close");
	ok(strlen(listing(1)) > 0, "by size: temporaries are hidden files");
	is_int(tfk_shardw_close(w, &err), 0, "by size: close");
	is_str(listing(1), "d-00000-of-00004.tfrecord d-00001-of-00004.tfrecord "
	       "d-00002-of-00004.tfrecord d-00003-of-00004.tfrecord",
	       "by size: four shards named -of-00004");
	for (i = 0; i < 4; i++) {
		char name[64];
		long j;

		snprintf(name, sizeof(name), "d-%05ld-of-00004.tfrecord", i);
		n = read_back(path(name), got, 16, TFK_COMP_NONE);
		is_int(n, i < 3 ? 3 : 1, "by size: shard %ld holds %d", i,
		       i < 3 ? 3 : 1);
		for (j = 0; j < n; j++)
			if (got[j] != all + j)
				good = 0;
		all += n > 0 ? n : 0;
	}
	ok(good && all == 10, "by size: records in order across shards");

	/* Exactly full: 3 records of 84 + 16 = 100 bytes, shard size 300:
	 * no empty fourth shard. */
	fresh_dir("exact");
	o.prefix = path("e");
	tfk_shardw_open(&w, &o, &err);
	write_n(w, 6, 84);
	is_int(tfk_shardw_close(w, &err), 0, "exact fit: close");
	is_str(listing(1), "e-00000-of-00002.tfrecord e-00001-of-00002.tfrecord",
	       "exact fit: two shards, no empty third");

	/* Shard size 0: one shard however much is written. */
	fresh_dir("one");
	o.prefix = path("one");
	o.shard_size = 0;
	tfk_shardw_open(&w, &o, &err);
	write_n(w, 50, 200);
	is_int(tfk_shardw_close(w, &err), 0, "size 0: close");
	is_str(listing(1), "one-00000-of-00001.tfrecord", "size 0: one shard");
	is_int(file_size(path("one-00000-of-00001.tfrecord")), 50 * 216,
	       "size 0: all bytes in it");

	/* No records: one empty shard, so the set exists. */
	fresh_dir("empty");
	o.prefix = path("none");
	tfk_shardw_open(&w, &o, &err);
	is_int(tfk_shardw_shards(w), 1, "empty: 1 shard reported");
	is_int(tfk_shardw_close(w, &err), 0, "empty: close");
	is_str(listing(1), "none-00000-of-00001.tfrecord", "empty: one shard file");
	is_int(file_size(path("none-00000-of-00001.tfrecord")), 0,
	       "empty: it is empty");
}

static void compressed(void)
{
	struct tfk_shardw_opts o = { NULL, 0, 2, TFK_COMP_GZIP };
	struct tfk_shardw *w;
	struct tfk_err err;
	unsigned char magic[2] = { 0, 0 };
	long got[64];
	FILE *f;

	fresh_dir("gz");
	o.prefix = path("g");
	tfk_shardw_open(&w, &o, &err);
	write_n(w, 40, 300);
	is_int(tfk_shardw_close(w, &err), 0, "gzip: close");
	is_str(listing(1), "g-00000-of-00002.tfrecord.gz g-00001-of-00002.tfrecord.gz",
	       "gzip: .tfrecord.gz names");
	f = fopen(path("g-00001-of-00002.tfrecord.gz"), "rb");
	if (f) {
		if (fread(magic, 1, 2, f) != 2)
			magic[0] = 0;
		fclose(f);
	}
	ok(magic[0] == 0x1f && magic[1] == 0x8b, "gzip: gzip magic");
	ok(file_size(path("g-00001-of-00002.tfrecord.gz")) < 20 * 316 / 4,
	   "gzip: compressed (repetitive payloads)");
	is_int(read_back(path("g-00001-of-00002.tfrecord.gz"), got, 64,
			 TFK_COMP_GZIP), 20, "gzip: 20 records read back");
	is_int(got[19], 39, "gzip: last record of shard 1 is record 39");

	fresh_dir("zlib");
	o.prefix = path("z");
	o.comp = TFK_COMP_ZLIB;
	o.num_shards = 0;
	tfk_shardw_open(&w, &o, &err);
	write_n(w, 5, 30);
	is_int(tfk_shardw_close(w, &err), 0, "zlib: close");
	is_str(listing(1), "z-00000-of-00001.tfrecord.zlib", "zlib: .tfrecord.zlib name");
	is_int(read_back(path("z-00000-of-00001.tfrecord.zlib"), got, 64,
			 TFK_COMP_ZLIB), 5, "zlib: 5 records read back");

	o.comp = TFK_COMP_AUTO;
	ok(tfk_shardw_open(&w, &o, &err) == TFK_EINVAL && !w,
	   "auto is no output compression: TFK_EINVAL");
	o.comp = TFK_COMP_NONE;
	o.num_shards = -1;
	is_int(tfk_shardw_open(&w, &o, &err), TFK_EINVAL, "negative shard count refused");
}

static void touch(const char *name)
{
	FILE *f = fopen(path(name), "w");

	if (f) {
		fputs("old", f);
		fclose(f);
	}
}

static void stale(void)
{
	struct tfk_shardw_opts o = { NULL, 0, 2, TFK_COMP_NONE };
	struct tfk_shardw *w;
	struct tfk_err err;

	fresh_dir("stale");
	touch("s-00000-of-00005.tfrecord");
	touch("s-00004-of-00005.tfrecord");
	touch("s-00001-of-00002.tfrecord.gz");
	touch("s-00000-of-00002.tfrecord");	/* same name: replaced */
	touch("s-00002-of-00002.tfrecord");	/* index past count */
	touch("s-00000-of-00002.tfrecord.bak");	/* not a shard name */
	touch("sx-00000-of-00001.tfrecord");	/* another prefix */
	touch("s-task00001-00000-of-00001.tfrecord");	/* another task */
	touch("s.schema.json");
	o.prefix = path("s");
	tfk_shardw_open(&w, &o, &err);
	write_n(w, 4, 10);
	is_str(listing(0), "s-00000-of-00002.tfrecord s-00000-of-00002.tfrecord.bak "
	       "s-00000-of-00005.tfrecord s-00001-of-00002.tfrecord.gz "
	       "s-00002-of-00002.tfrecord s-00004-of-00005.tfrecord "
	       "s-task00001-00000-of-00001.tfrecord s.schema.json "
	       "sx-00000-of-00001.tfrecord",
	       "stale: an earlier run's files stay until close");
	is_int(tfk_shardw_close(w, &err), 0, "stale: close");
	is_str(listing(1), "s-00000-of-00002.tfrecord s-00000-of-00002.tfrecord.bak "
	       "s-00001-of-00002.tfrecord s-task00001-00000-of-00001.tfrecord "
	       "s.schema.json sx-00000-of-00001.tfrecord",
	       "stale: other counts and compressions removed, the rest kept");
	is_int(file_size(path("s-00000-of-00002.tfrecord")), 2 * 26,
	       "stale: same-named shard replaced by the new one");
}

static void failures(void)
{
	struct tfk_shardw_opts o = { NULL, 100, 0, TFK_COMP_GZIP };
	struct tfk_shardw *w;
	struct tfk_err err;
	long k;
	int bad = 0, succeeded = 0;

	fresh_dir("discard");
	o.prefix = path("x");
	tfk_shardw_open(&w, &o, &err);
	write_n(w, 20, 50);
	ok(strlen(listing(1)) > 0, "discard: temporaries exist while writing");
	tfk_shardw_discard(w);
	is_str(listing(1), "", "discard: nothing left at all");
	tfk_shardw_discard(NULL);

	o.prefix = "/nonexistent-dir-tfk/x";
	o.num_shards = 2;
	is_int(tfk_shardw_open(&w, &o, &err), TFK_EIO, "missing directory: TFK_EIO");
	ok(strstr(err.msg, "/nonexistent-dir-tfk/x-00000-of-00002.tfrecord.gz") &&
	   strstr(err.msg, "cannot create"), "missing directory: message names "
	   "the shard (%s)", err.msg);
	o.num_shards = 0;
	is_int(tfk_shardw_open(&w, &o, &err), 0,
	       "missing directory, by size: open succeeds (no shard yet)");
	ok(tfk_shardw_write(w, "abc", 3, &err) == TFK_EIO,
	   "missing directory, by size: first write fails");
	is_int(tfk_shardw_write(w, "abc", 3, &err), TFK_EINVAL,
	       "write after a failure refused");
	is_int(tfk_shardw_close(w, &err), TFK_EINVAL,
	       "close after a failure refused (and frees)");

	/* Every allocation failing in turn: an error or success, and no
	 * file left behind on error. */
	fresh_dir("oom");
	o.prefix = path("m");
	o.shard_size = 200;
	for (k = 0; k < 200 && !succeeded; k++) {
		int rc;

		tfk_alloc_fail_after(k);
		rc = tfk_shardw_open(&w, &o, &err);
		if (!rc) {
			rc = write_n(w, 6, 100);
			if (rc)
				tfk_shardw_discard(w);
			else
				rc = tfk_shardw_close(w, &err);
		}
		tfk_alloc_fail_after(-1);
		if (rc && strcmp(listing(1), "")) {
			tap_diag("after failing allocation %ld: %s", k, listing(1));
			bad++;
		}
		if (!rc)
			succeeded = 1;
	}
	is_int(bad, 0, "allocation failures: nothing left on error");
	ok(succeeded, "allocation failures: succeeds once allocations do (%ld)", k);
	is_str(listing(1), "m-00000-of-00003.tfrecord.gz m-00001-of-00003.tfrecord.gz "
	       "m-00002-of-00003.tfrecord.gz", "allocation failures: final set");
}

static void to_stdout(void)
{
	struct tfk_shardw_opts o = { "-", 10, 4, TFK_COMP_NONE };
	struct tfk_shardw *w;
	struct tfk_err err;
	long got[16];
	int fd, saved;

	fresh_dir("stdout");
	fflush(stdout);
	saved = dup(1);
	fd = open(path("out.tfrecord"), O_WRONLY | O_CREAT | O_TRUNC, 0666);
	dup2(fd, 1);
	close(fd);
	tfk_shardw_open(&w, &o, &err);
	write_n(w, 7, 20);
	fd = tfk_shardw_close(w, &err);
	dup2(saved, 1);
	close(saved);
	is_int(fd, 0, "stdout: close");
	is_int(read_back(path("out.tfrecord"), got, 16, TFK_COMP_NONE), 7,
	       "stdout: all records in one stream, size and count ignored");
	is_int(got[6], 6, "stdout: in order");
	is_str(listing(1), "out.tfrecord", "stdout: no shard files");
}

/* Run tfk_conv_check in a child; its exit status (0 when it returned). */
static int conv_status(struct tfk_conv *c)
{
	struct tfk_shardw_opts o;
	long si, sn;
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 2);
		tfk_conv_check(c, &o, &si, &sn);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void conv_options(void)
{
	struct tfk_conv c = TFK_CONV_DEFAULTS, d;
	struct tfk_shardw_opts o;
	long si = -1, sn = -1;
	char *s;

	unsetenv("SLURM_ARRAY_TASK_ID");
	unsetenv("OMPI_COMM_WORLD_RANK");
	c.out = "data/train";
	c.compression = "GZIP";
	c.num_shards = 4;
	tfk_conv_check(&c, &o, &si, &sn);
	is_str(o.prefix, "data/train", "conv: prefix");
	is_int(o.comp, TFK_COMP_GZIP, "conv: compression parsed (any case)");
	is_int(o.num_shards, 4, "conv: num shards");
	is_int(o.shard_size, 128 << 20, "conv: default shard size 128M");
	ok(si == 0 && sn == 1, "conv: no --shard: 0/1");
	s = tfk_conv_schema_path(&c);
	is_str(s, "data/train.schema.json", "conv: schema path");
	tfk_free(s);

	c.shard = "3/8";
	tfk_conv_check(&c, &o, &si, &sn);
	ok(si == 3 && sn == 8, "conv: --shard 3/8");
	is_str(o.prefix, "data/train-task00003", "conv: task suffix on the prefix");
	s = tfk_conv_schema_path(&c);
	is_str(s, "data/train-task00003.schema.json", "conv: task schema path");
	tfk_free(s);

	c.shard = NULL;
	setenv("SLURM_ARRAY_TASK_ID", "5", 1);
	setenv("SLURM_ARRAY_TASK_COUNT", "6", 1);
	setenv("SLURM_ARRAY_TASK_MIN", "1", 1);
	tfk_conv_check(&c, &o, &si, &sn);
	ok(si == 4 && sn == 6, "conv: Slurm array 1-6, task 5 is shard 4/6");
	is_str(o.prefix, "data/train-task00004", "conv: Slurm task suffix");
	unsetenv("SLURM_ARRAY_TASK_ID");

	c.out = NULL;
	c.num_shards = 0;
	tfk_conv_check(&c, &o, &si, &sn);
	ok(o.prefix == NULL, "conv: stdout has no prefix");
	ok(tfk_conv_schema_path(&c) == NULL, "conv: stdout has no schema path");

	d = c;
	is_int(conv_status(&d), 0, "conv: valid options return");
	d.compression = "lz4";
	is_int(conv_status(&d), 2, "conv: unknown compression is a usage error");
	d = c;
	d.jobs = 0;
	is_int(conv_status(&d), 2, "conv: -j 0 is a usage error");
	d = c;
	d.num_shards = -2;
	is_int(conv_status(&d), 2, "conv: negative --num-shards is a usage error");
	d = c;
	d.num_shards = 3;
	is_int(conv_status(&d), 2, "conv: --num-shards 3 on stdout is a usage error");
	d = c;
	d.shard = "4/4";
	is_int(conv_status(&d), 2, "conv: --shard 4/4 is a usage error");
	d = c;
	d.out = "out/";
	is_int(conv_status(&d), 2, "conv: -o DIR/ is a usage error");
	d = c;
	d.compression = "auto";
	is_int(conv_status(&d), 2, "conv: --compression auto is a usage error");
}

int main(void)
{
	round_robin();
	by_size();
	compressed();
	stale();
	failures();
	to_stdout();
	conv_options();
	return tap_done();
}
