/*
 * t-shuffle.c - lib/data/shuffle: the generators against their published
 * vectors, tf.data's buffer semantics as an exact distribution, uniformity
 * as chi-square tests, the full shuffle identical with and without
 * spilling (one and several merge passes, later epochs re-keyed from
 * runs), temporary files that never show, and failure paths.
 *
 * Statistics: every chi-square test uses fixed seeds (so it cannot
 * flake) and fails above the 0.999 quantile of its chi-square
 * distribution (p-value threshold 0.001), computed with the
 * Wilson-Hilferty approximation, which is within 0.5% of the tables
 * for the degrees of freedom used here.
 */
#include "data/shuffle.h"
#include "util/alloc.h"
#include "tap.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The 0.999 quantile of chi-square with k degrees of freedom. */
static double chi2_crit(double k)
{
	const double z = 3.090232;	/* standard normal 0.999 quantile */
	double h = 2.0 / (9.0 * k);

	return k * pow(1.0 - h + z * sqrt(h), 3.0);
}

/* Captured output: record ids (first 4 bytes) and all bytes. */
struct cap {
	uint32_t *ids;
	size_t n, cap;
	uint8_t *bytes;
	size_t nbytes, bcap;
	int fail_at;		/* emit returns an error at this call (-1) */
};

static int cap_emit(void *ctx, const uint8_t *data, size_t len,
		    struct tfk_err *err)
{
	struct cap *c = ctx;
	uint32_t id = UINT32_MAX;

	if (c->fail_at >= 0 && (size_t)c->fail_at == c->n)
		return tfk_errf(err, TFK_EIO, "sink full");
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 64;
		c->ids = realloc(c->ids, c->cap * sizeof(*c->ids));
	}
	if (len >= 4)
		memcpy(&id, data, 4);
	c->ids[c->n++] = id;
	if (c->nbytes + len + 8 > c->bcap) {
		c->bcap = 2 * (c->nbytes + len + 8);
		c->bytes = realloc(c->bytes, c->bcap);
	}
	memcpy(c->bytes + c->nbytes, &len, sizeof(size_t));
	c->nbytes += sizeof(size_t);
	if (len)
		memcpy(c->bytes + c->nbytes, data, len);
	c->nbytes += len;
	return 0;
}

static void cap_reset(struct cap *c)
{
	c->n = 0;
	c->nbytes = 0;
	c->fail_at = -1;
}

static void cap_free(struct cap *c)
{
	free(c->ids);
	free(c->bytes);
	memset(c, 0, sizeof(*c));
}

/*
 * Record i: its id as 4 bytes, then (i * 7919) % maxlen filler bytes
 * that depend on i, so lengths vary and any mix-up of bytes shows.
 */
static size_t make_rec(uint8_t *p, uint32_t i, size_t maxlen)
{
	size_t n = maxlen ? (i * 7919u) % maxlen : 0, k;

	memcpy(p, &i, 4);
	for (k = 0; k < n; k++)
		p[4 + k] = (uint8_t)(i * 31 + k);
	return 4 + n;
}

/* 1 if c holds records 0..n-1 (each once) with their exact bytes. */
static int is_perm_intact(const struct cap *c, uint32_t n, size_t maxlen)
{
	uint8_t *seen = calloc(n ? n : 1, 1), rec[4096];
	size_t off = 0, i;
	int good = c->n == n;

	for (i = 0; good && i < c->n; i++) {
		size_t len, want;

		memcpy(&len, c->bytes + off, sizeof(size_t));
		off += sizeof(size_t);
		if (c->ids[i] >= n || seen[c->ids[i]]) {
			good = 0;
			break;
		}
		seen[c->ids[i]] = 1;
		want = make_rec(rec, c->ids[i], maxlen);
		good = len == want && !memcmp(c->bytes + off, rec, len);
		off += len;
	}
	free(seen);
	return good;
}

/* The generators ------------------------------------------------------- */

static void generators(void)
{
	/* splitmix64 from state 1234567: Vigna's splitmix64.c, as listed
	 * by Rosetta Code's "Pseudo-random numbers/Splitmix64" task. */
	static const uint64_t sm[5] = {
		6457827717110365317ull, 3203168211198807973ull,
		9817491932198370423ull, 4593380528125082431ull,
		16408922859458223821ull };
	/* xoshiro256** from state {1, 2, 3, 4}: the reference vector of
	 * the rand_xoshiro crate's Xoshiro256StarStar test. */
	static const uint64_t xo[10] = {
		11520ull, 0ull, 1509978240ull, 1215971899390074240ull,
		1216172134540287360ull, 607988272756665600ull,
		16172922978634559625ull, 8476171486693032832ull,
		10595114339597558777ull, 2904607092377533576ull };
	struct tfk_shuffle_rng rng = { { 1, 2, 3, 4 } }, a, b;
	uint64_t counts[6] = { 0 }, i, x;
	int k, good = 1, in_range = 1;
	double chi = 0;

	for (k = 0; k < 5; k++)
		good &= tfk_shuffle_splitmix64(1234567ull +
					       (uint64_t)k * 0x9e3779b97f4a7c15ull)
			== sm[k];
	ok(good, "splitmix64: the published outputs of state 1234567");
	good = 1;
	for (k = 0; k < 10; k++)
		good &= tfk_shuffle_rng_next(&rng) == xo[k];
	ok(good, "xoshiro256**: the published outputs of state {1,2,3,4}");

	tfk_shuffle_rng_init(&a, 42, 0);
	tfk_shuffle_rng_init(&b, 42, 0);
	good = 1;
	for (k = 0; k < 100; k++)
		good &= tfk_shuffle_rng_next(&a) == tfk_shuffle_rng_next(&b);
	ok(good, "same seed and epoch, same stream");
	tfk_shuffle_rng_init(&a, 42, 0);
	tfk_shuffle_rng_init(&b, 42, 1);
	ok(tfk_shuffle_rng_next(&a) != tfk_shuffle_rng_next(&b),
	   "another epoch, another stream");
	tfk_shuffle_rng_init(&a, 42, 0);
	tfk_shuffle_rng_init(&b, 43, 0);
	ok(tfk_shuffle_rng_next(&a) != tfk_shuffle_rng_next(&b),
	   "another seed, another stream");

	/* Lemire's draw: in range, and uniform over 6 values. */
	tfk_shuffle_rng_init(&a, 7, 0);
	for (i = 0; i < 60000; i++) {
		x = tfk_shuffle_rng_below(&a, 6);
		if (x >= 6) {
			in_range = 0;
			break;
		}
		counts[x]++;
	}
	ok(in_range, "below(6) stays below 6");
	for (k = 0; k < 6; k++)
		chi += (counts[k] - 10000.0) * (counts[k] - 10000.0) / 10000.0;
	ok(chi < chi2_crit(5), "below(6): chi-square %.2f < %.2f (5 dof)",
	   chi, chi2_crit(5));
	in_range = 1;
	for (i = 0; i < 1000; i++) {
		in_range &= tfk_shuffle_rng_below(&a, 1) == 0;
		in_range &= tfk_shuffle_rng_below(&a, (1ull << 63) + 1) <=
			    (1ull << 63);
		in_range &= tfk_shuffle_rng_below(&a, UINT64_MAX) < UINT64_MAX;
	}
	ok(in_range, "below(1) is 0; below(2^63+1), below(2^64-1) in range");
	/* n = 3 * 2^62, where 2^64 mod n = 2^62: without Lemire's
	 * rejection step, multiply-shift would give the values v with
	 * v % 3 == 0 two preimages out of four (1/2 instead of 1/3), and
	 * x % n would give v < 2^62 half of the time instead of a third. */
	{
		uint64_t n = 3ull << 62, mod3 = 0, low = 0;
		double c1, c2;

		for (i = 0; i < 30000; i++) {
			x = tfk_shuffle_rng_below(&a, n);
			mod3 += x % 3 == 0;
			low += x < (1ull << 62);
		}
		c1 = (mod3 - 10000.0) * (mod3 - 10000.0) * (1 / 10000.0 +
							    1 / 20000.0);
		c2 = (low - 10000.0) * (low - 10000.0) * (1 / 10000.0 +
							  1 / 20000.0);
		ok(c1 < chi2_crit(1) && c2 < chi2_crit(1), "below(3 * 2^62) "
		   "of 30000: %llu multiples of 3, %llu below 2^62 (expected "
		   "10000 each; chi-square %.2f, %.2f < %.2f)",
		   (unsigned long long)mod3, (unsigned long long)low, c1, c2,
		   chi2_crit(1));
	}
}

/* Buffer shuffle -------------------------------------------------------- */

/* Push records 0..n-1 through a buffer of b with (seed, epoch). */
static int run_buf(struct cap *c, uint32_t n, uint64_t b, uint64_t seed,
		   uint64_t epoch, size_t maxlen)
{
	struct tfk_shufbuf *sb;
	struct tfk_err err;
	uint8_t rec[4096];
	uint32_t i;
	int rc;

	cap_reset(c);
	rc = tfk_shufbuf_new(&sb, b, seed, epoch, &err);
	if (rc)
		return rc;
	for (i = 0; i < n && !rc; i++)
		rc = tfk_shufbuf_push(sb, rec, make_rec(rec, i, maxlen),
				      cap_emit, c, &err);
	if (!rc)
		rc = tfk_shufbuf_drain(sb, cap_emit, c, &err);
	tfk_shufbuf_free(sb);
	return rc;
}

static void buffer_basics(void)
{
	struct cap c = { 0 }, d = { 0 };
	struct tfk_shufbuf *sb;
	struct tfk_shufbuf_stats st;
	struct tfk_err err;
	uint8_t rec[4096];
	uint32_t i;
	int good = 1, intact = 1, differ = 0, rc;

	rc = run_buf(&c, 100, 1, 9, 0, 50);
	for (i = 0; i < c.n; i++)
		good &= c.ids[i] == i;
	ok(!rc && c.n == 100 && good, "--buffer 1 keeps the input order");

	/* Record with index i never comes out before position i - B + 1,
	 * i.e. position j holds an index <= j + B - 1; and at position
	 * j < n - B the buffer was full, so each is possible. */
	good = 1;
	for (i = 0; i < 200; i++) {
		uint32_t n = 1 + (i * 37) % 300, b = 1 + (i * 13) % 40, j;

		rc = run_buf(&c, n, b, i, 0, 300);
		intact &= !rc && is_perm_intact(&c, n, 300);
		for (j = 0; j < c.n; j++)
			good &= c.ids[j] <= j + b - 1;
	}
	ok(intact, "200 runs (sizes 1-300, buffers 1-40, records 4-303 "
	   "bytes): every record once, bytes intact through compaction");
	ok(good, "output position j only holds input records 0..j+B-1");

	run_buf(&c, 1000, 64, 5, 0, 200);
	run_buf(&d, 1000, 64, 5, 0, 200);
	ok(c.n == d.n && !memcmp(c.ids, d.ids, c.n * sizeof(*c.ids)),
	   "same seed: same order");
	run_buf(&d, 1000, 64, 6, 0, 200);
	for (i = 0; i < 1000; i++)
		differ += c.ids[i] != d.ids[i];
	ok(differ > 900, "another seed: another order (%d of 1000 moved)",
	   differ);

	/* Restart gives the same order as a fresh buffer of that epoch. */
	tfk_shufbuf_new(&sb, 64, 5, 0, &err);
	cap_reset(&d);
	for (i = 0; i < 500; i++)
		tfk_shufbuf_push(sb, rec, make_rec(rec, i, 200), cap_emit, &d,
				 &err);
	tfk_shufbuf_restart(sb, 3);
	cap_reset(&d);
	for (i = 0; i < 1000; i++)
		tfk_shufbuf_push(sb, rec, make_rec(rec, i, 200), cap_emit, &d,
				 &err);
	tfk_shufbuf_drain(sb, cap_emit, &d, &err);
	run_buf(&c, 1000, 64, 5, 3, 200);
	ok(c.n == d.n && !memcmp(c.ids, d.ids, c.n * sizeof(*c.ids)),
	   "restart(epoch 3) = a new buffer for epoch 3");
	tfk_shufbuf_stats(sb, &st);
	is_int(st.peak_records, 64, "stats: peak records is the buffer");
	is_int(st.n_in, 1500, "stats: records in");
	is_int(st.n_out, 1000 + 500 - 64, "stats: records out (the first "
	       "epoch's buffer was dropped by restart)");
	ok(st.peak_bytes <= 64 * 204 && st.peak_arena <= 4 * 64 * 204 + 65536,
	   "stats: peak %llu live bytes, %llu allocated: bounded by the "
	   "buffer", (unsigned long long)st.peak_bytes,
	   (unsigned long long)st.peak_arena);
	tfk_shufbuf_free(sb);

	/* A buffer larger than the input, empty records, no records. */
	rc = run_buf(&c, 10, 1000, 1, 0, 0);
	ok(!rc && is_perm_intact(&c, 10, 0), "buffer > input: a permutation");
	rc = run_buf(&c, 0, 10, 1, 0, 0);
	ok(!rc && c.n == 0, "no input: no output");
	tfk_shufbuf_new(&sb, 3, 1, 0, &err);
	cap_reset(&c);
	for (i = 0; i < 5; i++)
		tfk_shufbuf_push(sb, "", 0, cap_emit, &c, &err);
	tfk_shufbuf_drain(sb, cap_emit, &c, &err);
	ok(c.n == 5, "empty records pass through");
	tfk_shufbuf_free(sb);

	is_int(tfk_shufbuf_new(&sb, 0, 1, 0, &err), TFK_EINVAL,
	       "a buffer of 0 is refused");
	ok(sb == NULL && strstr(err.msg, "expected 1 to"), "... saying so: %s",
	   err.msg);
	is_int(tfk_shufbuf_new(&sb, UINT32_MAX, 1, 0, &err), TFK_EINVAL,
	       "a buffer of 2^32-1 is refused");

	/* emit's error stops a push and a drain, and comes back. */
	tfk_shufbuf_new(&sb, 2, 1, 0, &err);
	cap_reset(&c);
	c.fail_at = 0;
	rc = 0;
	for (i = 0; i < 5 && !rc; i++)
		rc = tfk_shufbuf_push(sb, rec, make_rec(rec, i, 10), cap_emit,
				      &c, &err);
	ok(rc == TFK_EIO && i == 3 && !strcmp(err.msg, "sink full"),
	   "emit's error stops the push that needed room");
	c.fail_at = 1;
	rc = tfk_shufbuf_drain(sb, cap_emit, &c, &err);
	ok(rc == TFK_EIO && c.n == 1, "... and a drain");
	tfk_shufbuf_free(sb);
	tfk_shufbuf_free(NULL);
	cap_free(&c);
	cap_free(&d);
}

/*
 * The exact output distribution of tf.data's shuffle for n records and a
 * buffer of b, from its definition: the buffer is a set; while input
 * remains and the set is full, a uniform member goes out and the next
 * input comes in; then the set drains uniformly. prob[perm index] +=
 * probability of each outcome. Written without our code.
 */
static void exact_walk(int n, int b, int *set, int nset, int next,
		       int *out, int nout, double p, double *prob)
{
	int k;

	while (nset < b && next < n)
		set[nset++] = next++;
	if (nset == 0) {
		int idx = 0;

		for (k = 0; k < nout; k++)
			idx = idx * n + out[k];
		prob[idx] += p;
		return;
	}
	for (k = 0; k < nset; k++) {
		int s2[16], m = 0, j;

		for (j = 0; j < nset; j++)
			if (j != k)
				s2[m++] = set[j];
		out[nout] = set[k];
		exact_walk(n, b, s2, m, next, out, nout + 1, p / nset, prob);
	}
}

static void buffer_distribution(void)
{
	enum { N = 5, B = 3, RUNS = 60000 };
	static double prob[3125];	/* 5^5 sequence indexes */
	static long count[3125];
	struct cap c = { 0 };
	int set[16], out[16], cells = 0, bad = 0;
	double chi = 0, total = 0;
	long r;
	size_t i;

	exact_walk(N, B, set, 0, 0, out, 0, 1.0, prob);
	for (i = 0; i < 3125; i++)
		total += prob[i];
	ok(fabs(total - 1.0) < 1e-12, "exact distribution sums to 1");
	for (r = 0; r < RUNS; r++) {
		int idx = 0;

		run_buf(&c, N, B, (uint64_t)r, 0, 0);
		for (i = 0; i < c.n; i++)
			idx = idx * N + (int)c.ids[i];
		count[idx]++;
	}
	for (i = 0; i < 3125; i++) {
		if (prob[i] > 0) {
			double e = prob[i] * RUNS;

			chi += (count[i] - e) * (count[i] - e) / e;
			cells++;
		} else if (count[i]) {
			bad++;
		}
	}
	ok(bad == 0, "5 records, buffer 3: no order the definition forbids");
	ok(cells == 54, "... %d possible orders (3 * 3 * 3 * 2 * 1: position "
	   "j takes one of records 0..j+2 not yet out)", cells);
	ok(chi < chi2_crit(cells - 1), "... each as often as the definition "
	   "says over %d seeds: chi-square %.1f < %.1f (%d dof)", RUNS, chi,
	   chi2_crit(cells - 1), cells - 1);
	cap_free(&c);
}

/* Count (record, position) over seeds for a permutation that should be
 * uniform, and return the chi-square with (n-1)^2 dof. */
static double position_chi2(int n, int runs, int full, uint64_t memory)
{
	long *cnt = calloc((size_t)(n * n), sizeof(*cnt));
	struct cap c = { 0 };
	struct tfk_err err;
	double e = (double)runs / n, chi = 0;
	uint8_t rec[8];
	int r, i;

	for (r = 0; r < runs; r++) {
		if (full) {
			struct tfk_shufall *sa;

			cap_reset(&c);
			tfk_shufall_new(&sa, (uint64_t)r + 1000, memory, NULL,
					&err);
			for (i = 0; i < n; i++)
				tfk_shufall_add(sa, rec, make_rec(rec, (uint32_t)i,
								  0), &err);
			tfk_shufall_emit(sa, 0, cap_emit, &c, &err);
			tfk_shufall_free(sa);
		} else {
			run_buf(&c, (uint32_t)n, (uint64_t)n, (uint64_t)r + 1000,
				0, 0);
		}
		for (i = 0; i < n && (size_t)i < c.n; i++)
			cnt[c.ids[i] * (uint32_t)n + (uint32_t)i]++;
	}
	for (i = 0; i < n * n; i++)
		chi += (cnt[i] - e) * (cnt[i] - e) / e;
	free(cnt);
	cap_free(&c);
	return chi;
}

static void uniformity(void)
{
	enum { RUNS = 24000 };
	static long count[24];
	struct cap c = { 0 };
	struct tfk_err err;
	double chi, e = RUNS / 24.0;
	uint8_t rec[8];
	int r, i, k;

	chi = position_chi2(8, 8000, 0, 0);
	ok(chi < chi2_crit(49), "buffer >= input: record x position uniform "
	   "over 8000 seeds: chi-square %.1f < %.1f (49 dof)", chi,
	   chi2_crit(49));
	chi = position_chi2(8, 8000, 1, 1 << 20);
	ok(chi < chi2_crit(49), "--buffer all: record x position uniform over "
	   "8000 seeds: chi-square %.1f < %.1f (49 dof)", chi, chi2_crit(49));

	/* Every one of the 4! permutations equally likely. */
	for (r = 0; r < RUNS; r++) {
		struct tfk_shufall *sa;
		int idx = 0, used = 0;

		cap_reset(&c);
		tfk_shufall_new(&sa, (uint64_t)r, 1 << 20, NULL, &err);
		for (i = 0; i < 4; i++)
			tfk_shufall_add(sa, rec, make_rec(rec, (uint32_t)i, 0),
					&err);
		tfk_shufall_emit(sa, 0, cap_emit, &c, &err);
		tfk_shufall_free(sa);
		/* Lehmer code of the permutation: 0..23. */
		for (i = 0; i < 4; i++) {
			int smaller = 0;

			for (k = 0; k < (int)c.ids[i]; k++)
				smaller += !(used >> k & 1);
			used |= 1 << c.ids[i];
			idx = idx * (4 - i) + smaller;
		}
		count[idx]++;
	}
	chi = 0;
	for (i = 0; i < 24; i++)
		chi += (count[i] - e) * (count[i] - e) / e;
	ok(chi < chi2_crit(23), "--buffer all: each of the 24 orders of 4 "
	   "records over %d seeds: chi-square %.1f < %.1f (23 dof)", RUNS, chi,
	   chi2_crit(23));
	cap_free(&c);
}

/* Full shuffle ------------------------------------------------------------ */

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n;
}

/* Add records 0..n-1 to a new full shuffle; NULL on failure. */
static struct tfk_shufall *fill_all(uint32_t n, uint64_t seed,
				    uint64_t memory, const char *dir,
				    size_t maxlen, struct tfk_err *err)
{
	struct tfk_shufall *sa;
	uint8_t rec[4096];
	uint32_t i;

	if (tfk_shufall_new(&sa, seed, memory, dir, err))
		return NULL;
	for (i = 0; i < n; i++)
		if (tfk_shufall_add(sa, rec, make_rec(rec, i, maxlen), err)) {
			tfk_shufall_free(sa);
			return NULL;
		}
	return sa;
}

static void full_shuffle(void)
{
	enum { N = 3000 };
	struct cap mem[3] = { { 0 } }, c = { 0 };
	struct tfk_shufall *sa;
	struct tfk_shufall_stats st;
	struct tfk_err err;
	char dir[600];
	int e, rc, differ = 0, i;

	snprintf(dir, sizeof(dir), "%s/spill", tap_tmpdir());
	mkdir(dir, 0700);

	/* In memory: epochs 0, 1, 2. */
	sa = fill_all(N, 77, 64 << 20, dir, 700, &err);
	for (e = 0; e < 3; e++) {
		cap_reset(&mem[e]);
		rc = tfk_shufall_emit(sa, (uint64_t)e, cap_emit, &mem[e], &err);
		ok(!rc && is_perm_intact(&mem[e], N, 700),
		   "in memory, epoch %d: every record once, bytes intact", e);
	}
	tfk_shufall_stats(sa, &st);
	ok(st.runs == 0 && st.spill_bytes == 0, "64 MiB: nothing spilled");
	is_int(st.n_records, N, "stats: records");
	cap_reset(&c);
	tfk_shufall_emit(sa, 0, cap_emit, &c, &err);
	ok(c.nbytes == mem[0].nbytes && !memcmp(c.bytes, mem[0].bytes, c.nbytes),
	   "epoch 0 again after epoch 2: the same bytes");
	for (i = 0; i < N; i++)
		differ += mem[0].ids[i] != mem[1].ids[i];
	ok(differ > N * 9 / 10, "epoch 1 is another order (%d of %d moved)",
	   differ, N);
	is_int(tfk_shufall_add(sa, "x", 1, &err), TFK_EINVAL,
	       "no record can be added once the output began");
	tfk_shufall_free(sa);

	/* Spilling: 64 KiB (one final merge) and 4 KiB (fan-in 2, many
	 * passes); epochs in another order, so later epochs are re-keyed
	 * from runs and epoch 0 is re-keyed back. */
	{
		static const uint64_t mems[2] = { 64 << 10, 4096 };
		static const int order[3] = { 2, 0, 1 };
		int m;

		for (m = 0; m < 2; m++) {
			int same = 1;

			sa = fill_all(N, 77, mems[m], dir, 700, &err);
			for (i = 0; i < 3; i++) {
				e = order[i];
				cap_reset(&c);
				rc = tfk_shufall_emit(sa, (uint64_t)e, cap_emit,
						      &c, &err);
				same &= !rc && c.nbytes == mem[e].nbytes &&
					!memcmp(c.bytes, mem[e].bytes, c.nbytes);
			}
			tfk_shufall_stats(sa, &st);
			ok(same, "--memory %llu: epochs 2, 0, 1 byte for byte "
			   "as in memory (%llu runs, %llu merge passes)",
			   (unsigned long long)mems[m],
			   (unsigned long long)st.runs,
			   (unsigned long long)st.merge_passes);
			ok(st.runs > 3 && (m == 0 || st.merge_passes > 0),
			   "... it did spill%s", m ? " and merge in passes" : "");
			is_int(count_entries(dir), 0, "... and no temporary file "
			       "has a name in the directory");
			tfk_shufall_free(sa);
		}
	}

	/* A record larger than the memory limit is held alone. */
	{
		uint8_t big[10000];
		int good;

		memset(big, 0xab, sizeof(big));
		tfk_shufall_new(&sa, 3, 4096, dir, &err);
		tfk_shufall_add(sa, "\0\0\0\0", 4, &err);
		rc = tfk_shufall_add(sa, big, sizeof(big), &err);
		tfk_shufall_add(sa, "\1\0\0\0", 4, &err);
		cap_reset(&c);
		rc |= tfk_shufall_emit(sa, 0, cap_emit, &c, &err);
		good = !rc && c.n == 3 && c.nbytes == 3 * sizeof(size_t) + 10008;
		ok(good, "a 10000-byte record with --memory 4096: kept whole");
		tfk_shufall_free(sa);
	}

	/* emit's error stops a merge. */
	sa = fill_all(500, 1, 4096, dir, 100, &err);
	cap_reset(&c);
	c.fail_at = 10;
	rc = tfk_shufall_emit(sa, 0, cap_emit, &c, &err);
	ok(rc == TFK_EIO && c.n == 10, "emit's error stops a merge");
	tfk_shufall_free(sa);

	/* No records at all. */
	sa = fill_all(0, 1, 4096, dir, 0, &err);
	cap_reset(&c);
	ok(!tfk_shufall_emit(sa, 0, cap_emit, &c, &err) && c.n == 0,
	   "no records: nothing out");
	tfk_shufall_free(sa);
	tfk_shufall_free(NULL);

	/* Bad settings and an unusable directory. */
	is_int(tfk_shufall_new(&sa, 1, 4095, NULL, &err), TFK_EINVAL,
	       "--memory below 4096 is refused");
	sa = fill_all(100, 1, 4096, "/nonexistent/dir", 100, &err);
	ok(sa == NULL && err.code == TFK_EIO &&
	   strstr(err.msg, "/nonexistent/dir: cannot create a temporary file"),
	   "a missing spill directory: %s", err.msg);

	ok(tfk_shuffle_default_memory() >= (64u << 20) &&
	   tfk_shuffle_default_memory() % (1 << 20) == 0,
	   "default memory: at least 64 MiB, whole MiB");

	for (i = 0; i < 3; i++)
		cap_free(&mem[i]);
	cap_free(&c);
	rmdir(dir);
}

/* Every allocation failure is TFK_ENOMEM, cleanly (ASan checks leaks). */
static void alloc_failures(void)
{
	struct cap c = { 0 }, want = { 0 };
	struct tfk_err err;
	int k, all_nomem = 1, recovered = 0;
	uint64_t mems[2] = { 1 << 20, 4096 };
	int m;

	for (k = 0; k < 40; k++) {
		int rc;

		tfk_alloc_fail_after(k);
		rc = run_buf(&c, 3000, 500, 2, 0, 100);
		tfk_alloc_fail_after(-1);
		if (rc == 0)
			recovered++;
		else
			all_nomem &= rc == TFK_ENOMEM;
	}
	ok(all_nomem && recovered > 0, "buffer shuffle: each failed "
	   "allocation is TFK_ENOMEM");

	for (m = 0; m < 2; m++) {
		all_nomem = 1;
		recovered = 0;
		cap_reset(&want);
		{
			struct tfk_shufall *sa = fill_all(400, 5, mems[m], NULL,
							  100, &err);

			tfk_shufall_emit(sa, 0, cap_emit, &want, &err);
			tfk_shufall_emit(sa, 1, cap_emit, &want, &err);
			tfk_shufall_free(sa);
		}
		for (k = 0; k < 200; k++) {
			struct tfk_shufall *sa;
			int rc = 0;

			cap_reset(&c);
			tfk_alloc_fail_after(k);
			sa = fill_all(400, 5, mems[m], NULL, 100, &err);
			if (!sa)
				rc = err.code;
			if (!rc)
				rc = tfk_shufall_emit(sa, 0, cap_emit, &c, &err);
			if (!rc)
				rc = tfk_shufall_emit(sa, 1, cap_emit, &c, &err);
			tfk_alloc_fail_after(-1);
			tfk_shufall_free(sa);
			if (rc == 0)
				recovered += c.nbytes == want.nbytes &&
					     !memcmp(c.bytes, want.bytes, c.nbytes);
			else
				all_nomem &= rc == TFK_ENOMEM;
		}
		ok(all_nomem && recovered > 0, "full shuffle, memory %llu: each "
		   "failed allocation is TFK_ENOMEM; unfailed runs give the same "
		   "bytes", (unsigned long long)mems[m]);
	}
	cap_free(&c);
	cap_free(&want);
}

int main(void)
{
	generators();
	buffer_basics();
	buffer_distribution();
	uniformity();
	full_shuffle();
	alloc_failures();
	return tap_done();
}
