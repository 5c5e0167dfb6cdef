/*
 * shuffle.c - buffer shuffle and external full shuffle (see shuffle.h).
 *
 * Buffer shuffle. The N slots are a dense array, so a uniform draw is
 * one bounded integer. Record bytes go to one arena, appended at its
 * end; an emitted record leaves a hole. When a new record does not fit,
 * the arena is compacted if the holes are at least as large as the live
 * records (so each byte is moved at most once per byte freed: amortized
 * O(1)), else it grows. Compaction slides records down in arena order,
 * which a doubly linked list through the slots keeps (appends go to its
 * tail, removals unlink), so no sort is needed. One malloc per record
 * and a slab per slot were rejected: the first is the allocator's
 * fragmentation problem in disguise, the second wastes the largest
 * record's size on every slot.
 *
 * Full shuffle. Keys are counter-based (a function of seed, epoch and
 * input index, not of the order records are seen), which is what makes
 * the spilled and the in-memory orders identical, lets a later epoch
 * re-key records read back from runs in any order, and lets the runs
 * store the index instead of the key. A run is records back to back:
 *
 *   u64 index (little-endian host order: the file never leaves this
 *   process)  u64 length  length bytes
 *
 * sorted by key. Runs are unlinked right after mkstemp, so a kill or a
 * crash leaves nothing behind. Merging is a binary min-heap of run
 * readers, each with its own read buffer (pread, so one file can be
 * read again for the next epoch without reopening); more runs than
 * the fan-in are first merged into longer runs, oldest first.
 *
 * Sorting is a radix-bucketed insertion: keys are uniform, so sending
 * each entry to bucket key >> (64 - b) with 2^b ~ n leaves about one
 * entry per bucket, finished by insertion sort: O(n), a few times
 * faster than qsort on millions of entries.
 */
#include "data/shuffle.h"
#include "util/alloc.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define GOLDEN 0x9e3779b97f4a7c15ull

/* The generator --------------------------------------------------------- */

uint64_t tfk_shuffle_splitmix64(uint64_t x)
{
	uint64_t z = x + GOLDEN;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint64_t tfk_shuffle_epoch_seed(uint64_t seed, uint64_t epoch)
{
	return tfk_shuffle_splitmix64(tfk_shuffle_splitmix64(seed) +
				      epoch * GOLDEN);
}

void tfk_shuffle_rng_init(struct tfk_shuffle_rng *rng, uint64_t seed,
			  uint64_t epoch)
{
	uint64_t x = tfk_shuffle_epoch_seed(seed, epoch);
	int k;

	for (k = 0; k < 4; k++)
		rng->s[k] = tfk_shuffle_splitmix64(x + (uint64_t)k * GOLDEN);
	if (!(rng->s[0] | rng->s[1] | rng->s[2] | rng->s[3]))
		rng->s[0] = 1;	/* the one state xoshiro cannot leave */
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t tfk_shuffle_rng_next(struct tfk_shuffle_rng *rng)
{
	uint64_t *s = rng->s;
	uint64_t r = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return r;
}

uint64_t tfk_shuffle_rng_below(struct tfk_shuffle_rng *rng, uint64_t n)
{
	unsigned __int128 m = (unsigned __int128)tfk_shuffle_rng_next(rng) * n;
	uint64_t lo = (uint64_t)m;

	if (lo < n) {
		uint64_t t = (0 - n) % n;	/* 2^64 mod n */

		while (lo < t) {
			m = (unsigned __int128)tfk_shuffle_rng_next(rng) * n;
			lo = (uint64_t)m;
		}
	}
	return (uint64_t)(m >> 64);
}

/* Buffer shuffle ---------------------------------------------------------- */

#define NIL UINT32_MAX

struct bslot {
	size_t off, len;
	uint32_t prev, next;	/* neighbours in arena order */
};

struct tfk_shufbuf {
	uint64_t seed;
	uint32_t cap_n;		/* the buffer size N */
	uint32_t n;		/* records held: slots[0..n) */
	uint32_t slots_cap;
	struct bslot *slots;
	uint32_t head, tail;	/* arena order */
	uint8_t *arena;
	size_t arena_cap, used, live;
	struct tfk_shuffle_rng rng;
	struct tfk_shufbuf_stats st;
};

int tfk_shufbuf_new(struct tfk_shufbuf **sbp, uint64_t n, uint64_t seed,
		    uint64_t epoch, struct tfk_err *err)
{
	struct tfk_shufbuf *sb;

	*sbp = NULL;
	if (n == 0 || n >= NIL)
		return tfk_errf(err, TFK_EINVAL, "shuffle buffer of %" PRIu64
				" records: expected 1 to %" PRIu32, n, NIL - 1);
	sb = tfk_calloc(1, sizeof(*sb));
	if (!sb)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	sb->seed = seed;
	sb->cap_n = (uint32_t)n;
	tfk_shufbuf_restart(sb, epoch);
	*sbp = sb;
	return 0;
}

void tfk_shufbuf_free(struct tfk_shufbuf *sb)
{
	if (!sb)
		return;
	tfk_free(sb->slots);
	tfk_free(sb->arena);
	tfk_free(sb);
}

void tfk_shufbuf_restart(struct tfk_shufbuf *sb, uint64_t epoch)
{
	sb->n = 0;
	sb->head = sb->tail = NIL;
	sb->used = sb->live = 0;
	tfk_shuffle_rng_init(&sb->rng, sb->seed, epoch);
}

void tfk_shufbuf_stats(const struct tfk_shufbuf *sb,
		       struct tfk_shufbuf_stats *st)
{
	*st = sb->st;
}

static void unlink_slot(struct tfk_shufbuf *sb, uint32_t j)
{
	struct bslot *s = &sb->slots[j];

	if (s->prev != NIL)
		sb->slots[s->prev].next = s->next;
	else
		sb->head = s->next;
	if (s->next != NIL)
		sb->slots[s->next].prev = s->prev;
	else
		sb->tail = s->prev;
	sb->live -= s->len;
}

static void compact(struct tfk_shufbuf *sb)
{
	size_t pos = 0;
	uint32_t k;

	for (k = sb->head; k != NIL; k = sb->slots[k].next) {
		struct bslot *s = &sb->slots[k];

		if (s->off != pos)
			memmove(sb->arena + pos, sb->arena + s->off, s->len);
		s->off = pos;
		pos += s->len;
	}
	sb->used = pos;
}

/* Copy a record into slot j (allocated, unlinked) at the arena's end. */
static int store(struct tfk_shufbuf *sb, uint32_t j, const void *data,
		 size_t len, struct tfk_err *err)
{
	struct bslot *s;

	if (len > sb->arena_cap - sb->used || !sb->arena) {
		if (sb->used - sb->live >= sb->live && sb->used > sb->live)
			compact(sb);
		if (len > sb->arena_cap - sb->used || !sb->arena) {
			size_t cap = sb->arena_cap ? sb->arena_cap : 1 << 16;
			uint8_t *p;

			while (cap - sb->used < len) {
				if (cap > SIZE_MAX / 2)
					return tfk_errf(err, TFK_ENOMEM,
							"out of memory");
				cap *= 2;
			}
			p = tfk_realloc(sb->arena, cap);
			if (!p)
				return tfk_errf(err, TFK_ENOMEM, "out of memory "
						"(shuffle buffer of %zu bytes)",
						cap);
			sb->arena = p;
			sb->arena_cap = cap;
			if (cap > sb->st.peak_arena)
				sb->st.peak_arena = cap;
		}
	}
	s = &sb->slots[j];
	if (len)
		memcpy(sb->arena + sb->used, data, len);
	s->off = sb->used;
	s->len = len;
	sb->used += len;
	sb->live += len;
	s->prev = sb->tail;
	s->next = NIL;
	if (sb->tail != NIL)
		sb->slots[sb->tail].next = j;
	else
		sb->head = j;
	sb->tail = j;
	if (sb->live > sb->st.peak_bytes)
		sb->st.peak_bytes = sb->live;
	return 0;
}

int tfk_shufbuf_push(struct tfk_shufbuf *sb, const void *data, size_t len,
		     tfk_shuffle_emit_fn emit, void *ctx, struct tfk_err *err)
{
	uint32_t j;
	int rc;

	if (sb->n == sb->cap_n) {
		struct bslot *s;

		j = (uint32_t)tfk_shuffle_rng_below(&sb->rng, sb->n);
		s = &sb->slots[j];
		rc = emit(ctx, sb->arena + s->off, s->len, err);
		if (rc)
			return rc;
		sb->st.n_out++;
		unlink_slot(sb, j);
	} else {
		if (sb->n == sb->slots_cap) {
			uint64_t cap = sb->slots_cap ? 2 * (uint64_t)sb->slots_cap
						     : 1024;
			struct bslot *p;

			if (cap > sb->cap_n)
				cap = sb->cap_n;
			p = tfk_realloc(sb->slots, (size_t)cap * sizeof(*p));
			if (!p)
				return tfk_errf(err, TFK_ENOMEM, "out of memory");
			sb->slots = p;
			sb->slots_cap = (uint32_t)cap;
		}
		j = sb->n;
	}
	rc = store(sb, j, data, len, err);
	if (rc)
		return rc;
	if (j == sb->n) {
		sb->n++;
		if (sb->n > sb->st.peak_records)
			sb->st.peak_records = sb->n;
	}
	sb->st.n_in++;
	return 0;
}

int tfk_shufbuf_drain(struct tfk_shufbuf *sb, tfk_shuffle_emit_fn emit,
		      void *ctx, struct tfk_err *err)
{
	while (sb->n > 0) {
		uint32_t j = (uint32_t)tfk_shuffle_rng_below(&sb->rng, sb->n);
		uint32_t last = sb->n - 1;
		struct bslot *s = &sb->slots[j];
		int rc = emit(ctx, sb->arena + s->off, s->len, err);

		if (rc)
			return rc;
		sb->st.n_out++;
		unlink_slot(sb, j);
		if (j != last) {
			/* Move the last slot into the hole, links and all. */
			struct bslot *m = &sb->slots[last];

			*s = *m;
			if (s->prev != NIL)
				sb->slots[s->prev].next = j;
			else
				sb->head = j;
			if (s->next != NIL)
				sb->slots[s->next].prev = j;
			else
				sb->tail = j;
		}
		sb->n--;
	}
	sb->used = sb->live = 0;
	return 0;
}

/* Full shuffle: runs ------------------------------------------------------ */

struct ent {
	uint64_t key, idx;
	size_t off, len;
};

struct run {
	int fd;
	uint64_t size;		/* bytes */
	uint64_t n;		/* records */
};

#define RUN_HDR 16
#define GATHER 256	/* records per writev: 512 iovecs <= IOV_MAX */

struct tfk_shufall {
	uint64_t seed, memory;
	char *tmpdir;
	int emitted;		/* no more adds */
	uint64_t n_total;	/* records added */
	uint64_t bytes_total;
	/* In memory: entries [0, n) over the arena. */
	struct ent *ents;
	size_t n, ents_cap;
	uint8_t *arena;
	size_t arena_cap, used;
	uint64_t mem_epoch;	/* epoch the entries' keys are for */
	int mem_sorted;
	/* On disk. */
	struct run *runs;
	size_t n_runs, runs_cap;
	uint64_t runs_epoch;
	size_t bufsize, fanin;
	uint64_t cur_mem;	/* what is allocated now, for peak_memory */
	struct tfk_shufall_stats st;
};

static void mem_note(struct tfk_shufall *sa)
{
	uint64_t m = sa->arena_cap + sa->ents_cap * sizeof(struct ent) +
		     sa->cur_mem;

	if (m > sa->st.peak_memory)
		sa->st.peak_memory = m;
}

static uint64_t key_of(uint64_t base, uint64_t idx)
{
	return tfk_shuffle_splitmix64(base + idx * GOLDEN);
}

static void insertion_sort(struct ent *e, size_t n)
{
	size_t i, j;

	for (i = 1; i < n; i++) {
		struct ent t = e[i];

		for (j = i; j > 0 && e[j - 1].key > t.key; j--)
			e[j] = e[j - 1];
		e[j] = t;
	}
}

static int cmp_ent(const void *a, const void *b)
{
	uint64_t x = ((const struct ent *)a)->key;
	uint64_t y = ((const struct ent *)b)->key;

	return x < y ? -1 : x > y;
}

/*
 * Sort e[0..n) by key. Bucketing needs a second array and a count per
 * bucket; when that memory cannot be had, qsort gives the same order
 * (keys are distinct), only slower.
 */
static void sort_ents(struct ent *e, size_t n)
{
	struct ent *tmp;
	size_t *cnt, i, nb;
	int bits = 1;

	if (n < 64) {
		insertion_sort(e, n);
		return;
	}
	while (bits < 30 && ((size_t)1 << bits) < n)
		bits++;
	nb = (size_t)1 << bits;
	tmp = tfk_malloc(n * sizeof(*tmp));
	cnt = tfk_calloc(nb + 1, sizeof(*cnt));
	if (!tmp || !cnt) {
		tfk_free(tmp);
		tfk_free(cnt);
		qsort(e, n, sizeof(*e), cmp_ent);
		return;
	}
	for (i = 0; i < n; i++)
		cnt[(e[i].key >> (64 - bits)) + 1]++;
	for (i = 1; i <= nb; i++)
		cnt[i] += cnt[i - 1];
	for (i = 0; i < n; i++)
		tmp[cnt[e[i].key >> (64 - bits)]++] = e[i];
	/* cnt[b] is now the end of bucket b: sort each bucket alone. */
	for (i = 0; i < nb; i++) {
		size_t lo = i ? cnt[i - 1] : 0;

		if (cnt[i] - lo > 1)
			insertion_sort(tmp + lo, cnt[i] - lo);
	}
	memcpy(e, tmp, n * sizeof(*e));
	tfk_free(tmp);
	tfk_free(cnt);
}

static int new_tmp(struct tfk_shufall *sa, int *fd, struct tfk_err *err)
{
	const char *dir = sa->tmpdir;
	size_t len;
	char *path;

	if (!dir)
		dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	len = strlen(dir) + sizeof("/tfk-shuffle-XXXXXX");
	path = tfk_malloc(len);
	if (!path)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	snprintf(path, len, "%s/tfk-shuffle-XXXXXX", dir);
	*fd = mkostemp(path, O_CLOEXEC);
	if (*fd < 0) {
		int e = errno;

		tfk_free(path);
		return tfk_errf(err, TFK_EIO, "%s: cannot create a temporary "
				"file: %s", dir, strerror(e));
	}
	unlink(path);
	tfk_free(path);
	return 0;
}

/* A buffered run writer. */
struct wr {
	int fd;
	uint8_t *buf;
	size_t cap, len;
	uint64_t size, n;
	const char *dir;
};

static int wr_flush(struct wr *w, struct tfk_err *err)
{
	size_t done = 0;

	while (done < w->len) {
		ssize_t k = write(w->fd, w->buf + done, w->len - done);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return tfk_errf(err, TFK_EIO, "%s: temporary file: "
					"write failed: %s", w->dir,
					k < 0 ? strerror(errno) : "no progress");
		done += (size_t)k;
	}
	w->size += w->len;
	w->len = 0;
	return 0;
}

static int wr_bytes(struct wr *w, const void *p, size_t n,
		    struct tfk_err *err)
{
	while (n) {
		size_t k = w->cap - w->len;
		int rc;

		if (k == 0) {
			rc = wr_flush(w, err);
			if (rc)
				return rc;
			continue;
		}
		if (k > n)
			k = n;
		memcpy(w->buf + w->len, p, k);
		w->len += k;
		p = (const uint8_t *)p + k;
		n -= k;
	}
	return 0;
}

/* Write iov[0..n) whole, past w's (empty) buffer. Clobbers iov. */
static int wr_gather(struct wr *w, struct iovec *iov, size_t n,
		     struct tfk_err *err)
{
	while (n > 0) {
		ssize_t k = writev(w->fd, iov, (int)n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return tfk_errf(err, TFK_EIO, "%s: temporary file: "
					"write failed: %s", w->dir,
					k < 0 ? strerror(errno) : "no progress");
		w->size += (uint64_t)k;
		while (n > 0 && (size_t)k >= iov->iov_len) {
			k -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (uint8_t *)iov->iov_base + k;
			iov->iov_len -= (size_t)k;
		}
	}
	return 0;
}

static int wr_record(struct wr *w, uint64_t idx, const void *p, size_t n,
		     struct tfk_err *err)
{
	uint64_t hdr[2] = { idx, n };
	int rc = wr_bytes(w, hdr, sizeof(hdr), err);

	if (!rc)
		rc = wr_bytes(w, p, n, err);
	if (!rc)
		w->n++;
	return rc;
}

static const char *dir_name(const struct tfk_shufall *sa)
{
	const char *d = sa->tmpdir ? sa->tmpdir : getenv("TMPDIR");

	return d && *d ? d : "/tmp";
}

static int wr_open(struct tfk_shufall *sa, struct wr *w, struct tfk_err *err)
{
	int rc;

	memset(w, 0, sizeof(*w));
	w->fd = -1;
	w->dir = dir_name(sa);
	w->cap = sa->bufsize;
	w->buf = tfk_malloc(w->cap);
	if (!w->buf)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	rc = new_tmp(sa, &w->fd, err);
	if (rc) {
		tfk_free(w->buf);
		w->buf = NULL;
	}
	return rc;
}

static void wr_abandon(struct wr *w)
{
	if (w->fd >= 0)
		close(w->fd);
	tfk_free(w->buf);
	w->buf = NULL;
	w->fd = -1;
}

/* Finish w and append it to the runs (consumes w, also on failure). */
static int wr_commit(struct tfk_shufall *sa, struct wr *w,
		     struct tfk_err *err)
{
	int rc = wr_flush(w, err);

	if (!rc && sa->n_runs == sa->runs_cap) {
		size_t cap = sa->runs_cap ? 2 * sa->runs_cap : 16;
		struct run *p = tfk_realloc(sa->runs, cap * sizeof(*p));

		if (!p)
			rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
		else {
			sa->runs = p;
			sa->runs_cap = cap;
		}
	}
	if (rc) {
		wr_abandon(w);
		return rc;
	}
	sa->runs[sa->n_runs].fd = w->fd;
	sa->runs[sa->n_runs].size = w->size;
	sa->runs[sa->n_runs].n = w->n;
	sa->n_runs++;
	sa->st.spill_bytes += w->size;
	tfk_free(w->buf);
	w->buf = NULL;
	w->fd = -1;
	return 0;
}

/* Sort what memory holds and write it as one run; memory is then empty. */
static int spill(struct tfk_shufall *sa, struct tfk_err *err)
{
	struct wr w;
	size_t i;
	int rc;

	sort_ents(sa->ents, sa->n);
	rc = wr_open(sa, &w, err);
	if (rc)
		return rc;
	sa->cur_mem += w.cap;
	mem_note(sa);
	sa->cur_mem -= w.cap;
	/* Straight from the arena: gathering into w's buffer first was a
	 * seventh of the time of a spill-bound shuffle. */
	for (i = 0; i < sa->n && !rc; i += GATHER) {
		uint64_t hdr[GATHER][2];
		struct iovec iov[2 * GATHER];
		size_t k, m = sa->n - i < GATHER ? sa->n - i : GATHER;

		for (k = 0; k < m; k++) {
			const struct ent *e = &sa->ents[i + k];

			hdr[k][0] = e->idx;
			hdr[k][1] = e->len;
			iov[2 * k].iov_base = hdr[k];
			iov[2 * k].iov_len = RUN_HDR;
			iov[2 * k + 1].iov_base = sa->arena + e->off;
			iov[2 * k + 1].iov_len = e->len;
		}
		rc = wr_gather(&w, iov, 2 * m, err);
		w.n += m;
	}
	if (rc) {
		wr_abandon(&w);
		return rc;
	}
	rc = wr_commit(sa, &w, err);
	if (rc)
		return rc;
	sa->st.runs++;
	sa->n = 0;
	sa->used = 0;
	sa->mem_sorted = 0;
	return 0;
}

/* A run reader. */
struct rd {
	const struct run *run;
	uint64_t pos;		/* file offset of buf[hi] */
	uint8_t *buf;
	size_t cap, lo, hi;
	uint64_t left;		/* records not yet returned */
	/* the current record */
	uint64_t key, idx;
	const uint8_t *data;
	size_t len;
};

static int rd_need(struct rd *r, size_t n, const char *dir,
		   struct tfk_err *err)
{
	if (r->hi - r->lo >= n)
		return 0;
	if (r->lo) {
		memmove(r->buf, r->buf + r->lo, r->hi - r->lo);
		r->hi -= r->lo;
		r->lo = 0;
	}
	if (n > r->cap) {
		uint8_t *p = tfk_realloc(r->buf, n);

		if (!p)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		r->buf = p;
		r->cap = n;
	}
	while (r->hi < n) {
		size_t want = r->cap - r->hi;
		ssize_t k;

		if (want > r->run->size - r->pos)
			want = (size_t)(r->run->size - r->pos);
		if (want == 0)
			return tfk_errf(err, TFK_EIO, "%s: temporary file: "
					"ends inside a record", dir);
		k = pread(r->run->fd, r->buf + r->hi, want, (off_t)r->pos);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return tfk_errf(err, TFK_EIO, "%s: temporary file: "
					"read failed: %s", dir,
					k < 0 ? strerror(errno) : "end of file");
		r->hi += (size_t)k;
		r->pos += (uint64_t)k;
	}
	return 0;
}

/* Advance to the next record of r: 1, 0 at the end, or an error. */
static int rd_next(struct rd *r, uint64_t base, const char *dir,
		   struct tfk_err *err)
{
	uint64_t hdr[2];
	int rc;

	r->lo += r->len;
	r->len = 0;
	if (r->left == 0)
		return 0;
	rc = rd_need(r, RUN_HDR, dir, err);
	if (rc)
		return rc;
	memcpy(hdr, r->buf + r->lo, RUN_HDR);
	if (hdr[1] > r->run->size)
		return tfk_errf(err, TFK_EIO, "%s: temporary file: bad record "
				"length %" PRIu64, dir, hdr[1]);
	rc = rd_need(r, RUN_HDR + (size_t)hdr[1], dir, err);
	if (rc)
		return rc;
	r->lo += RUN_HDR;
	r->idx = hdr[0];
	r->key = key_of(base, hdr[0]);
	r->len = (size_t)hdr[1];
	r->data = r->buf + r->lo;
	r->left--;
	return 1;
}

/* Records of a merge go either to the caller or into a longer run. */
struct sink {
	tfk_shuffle_emit_fn emit;
	void *ctx;
	struct wr *w;
};

static void heap_down(struct rd **h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		struct rd *t;

		if (l < n && h[l]->key < h[m]->key)
			m = l;
		if (l + 1 < n && h[l + 1]->key < h[m]->key)
			m = l + 1;
		if (m == i)
			return;
		t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/* Merge runs[first .. first+k) (sorted for base) into sink. */
static int merge(struct tfk_shufall *sa, size_t first, size_t k,
		 uint64_t base, struct sink *out, struct tfk_err *err)
{
	struct rd *rds = tfk_calloc(k, sizeof(*rds));
	struct rd **heap = tfk_calloc(k, sizeof(*heap));
	const char *dir = dir_name(sa);
	size_t i, n = 0;
	int rc = 0;

	if (!rds || !heap) {
		rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < k; i++) {
		rds[i].run = &sa->runs[first + i];
		rds[i].left = rds[i].run->n;
		rds[i].cap = sa->bufsize;
		rds[i].buf = tfk_malloc(rds[i].cap);
		if (!rds[i].buf) {
			rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
			goto out;
		}
	}
	sa->cur_mem += (uint64_t)k * sa->bufsize + (out->w ? out->w->cap : 0);
	mem_note(sa);
	sa->cur_mem -= (uint64_t)k * sa->bufsize + (out->w ? out->w->cap : 0);
	for (i = 0; i < k; i++) {
		rc = rd_next(&rds[i], base, dir, err);
		if (rc < 0)
			goto out;
		if (rc)
			heap[n++] = &rds[i];
	}
	rc = 0;
	for (i = n / 2; i-- > 0;)
		heap_down(heap, n, i);
	while (n > 0) {
		struct rd *r = heap[0];

		if (out->w)
			rc = wr_record(out->w, r->idx, r->data, r->len, err);
		else
			rc = out->emit(out->ctx, r->data, r->len, err);
		if (rc)
			break;
		rc = rd_next(r, base, dir, err);
		if (rc < 0)
			break;
		if (rc == 0)
			heap[0] = heap[--n];
		rc = 0;
		heap_down(heap, n, 0);
	}
out:
	if (rds)
		for (i = 0; i < k; i++)
			tfk_free(rds[i].buf);
	tfk_free(rds);
	tfk_free(heap);
	return rc;
}

static void drop_runs(struct tfk_shufall *sa, size_t first, size_t k)
{
	size_t i;

	for (i = first; i < first + k; i++)
		close(sa->runs[i].fd);
	if (sa->n_runs > first + k)
		memmove(sa->runs + first, sa->runs + first + k,
			(sa->n_runs - first - k) * sizeof(*sa->runs));
	sa->n_runs -= k;
}

/* Merge the oldest runs into one until at most fanin are left. */
static int reduce_runs(struct tfk_shufall *sa, uint64_t base,
		       struct tfk_err *err)
{
	while (sa->n_runs > sa->fanin) {
		struct sink s = { NULL, NULL, NULL };
		struct wr w;
		int rc = wr_open(sa, &w, err);

		if (rc)
			return rc;
		s.w = &w;
		rc = merge(sa, 0, sa->fanin, base, &s, err);
		if (rc) {
			wr_abandon(&w);
			return rc;
		}
		rc = wr_commit(sa, &w, err);
		if (rc)
			return rc;
		drop_runs(sa, 0, sa->fanin);
		sa->st.merge_passes++;
	}
	return 0;
}

/* Full shuffle ------------------------------------------------------------ */

int tfk_shufall_new(struct tfk_shufall **sap, uint64_t seed, uint64_t memory,
		    const char *tmpdir, struct tfk_err *err)
{
	struct tfk_shufall *sa;
	uint64_t b;

	*sap = NULL;
	if (memory < 4096)
		return tfk_errf(err, TFK_EINVAL, "shuffle memory of %" PRIu64
				" bytes: expected at least 4096", memory);
	sa = tfk_calloc(1, sizeof(*sa));
	if (!sa)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	sa->seed = seed;
	sa->memory = memory;
	if (tmpdir && !(sa->tmpdir = tfk_strdup(tmpdir))) {
		tfk_free(sa);
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	/* Half the memory for the read buffers of a merge, 64 KiB to
	 * 4 MiB each, and at most 128 runs at once (file descriptors). */
	sa->fanin = (size_t)(memory / 2 / (64 << 10));
	if (sa->fanin > 128)
		sa->fanin = 128;
	if (sa->fanin < 2)
		sa->fanin = 2;
	b = memory / 2 / sa->fanin;
	if (b < (64 << 10))
		b = 64 << 10;
	if (b > (4 << 20))
		b = 4 << 20;
	sa->bufsize = (size_t)b;
	*sap = sa;
	return 0;
}

static void free_mem(struct tfk_shufall *sa)
{
	tfk_free(sa->ents);
	tfk_free(sa->arena);
	sa->ents = NULL;
	sa->arena = NULL;
	sa->ents_cap = sa->arena_cap = 0;
	sa->n = sa->used = 0;
}

void tfk_shufall_free(struct tfk_shufall *sa)
{
	if (!sa)
		return;
	drop_runs(sa, 0, sa->n_runs);
	tfk_free(sa->runs);
	free_mem(sa);
	tfk_free(sa->tmpdir);
	tfk_free(sa);
}

void tfk_shufall_stats(const struct tfk_shufall *sa,
		       struct tfk_shufall_stats *st)
{
	*st = sa->st;
	st->n_records = sa->n_total;
	st->n_bytes = sa->bytes_total;
}

/* Hold one record keyed for base, spilling first when memory is full. */
static int hold(struct tfk_shufall *sa, uint64_t idx, uint64_t base,
		const void *data, size_t len, struct tfk_err *err)
{
	uint64_t need = (uint64_t)sa->used + len +
			(uint64_t)(sa->n + 1) * sizeof(struct ent);
	struct ent *e;
	int rc;

	if (need > sa->memory && sa->n > 0) {
		rc = spill(sa, err);
		if (rc)
			return rc;
	}
	if (sa->n == sa->ents_cap) {
		size_t cap = sa->ents_cap ? 2 * sa->ents_cap : 1024;
		size_t most = (size_t)(sa->memory / sizeof(struct ent)) + 1;
		struct ent *p;

		if (cap > most && most > sa->n)
			cap = most;
		p = tfk_realloc(sa->ents, cap * sizeof(*p));
		if (!p)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		sa->ents = p;
		sa->ents_cap = cap;
	}
	if (len > sa->arena_cap - sa->used || !sa->arena) {
		uint64_t cap = sa->arena_cap ? 2 * (uint64_t)sa->arena_cap
					     : 1 << 16;
		uint8_t *p;

		if (cap > sa->memory)
			cap = sa->memory;
		if (cap < (uint64_t)sa->used + len)
			cap = (uint64_t)sa->used + len;
		if (cap > SIZE_MAX)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		p = tfk_realloc(sa->arena, (size_t)cap);
		if (!p)
			return tfk_errf(err, TFK_ENOMEM, "out of memory "
					"(shuffle arena of %" PRIu64 " bytes)",
					cap);
		sa->arena = p;
		sa->arena_cap = (size_t)cap;
	}
	mem_note(sa);
	e = &sa->ents[sa->n++];
	e->key = key_of(base, idx);
	e->idx = idx;
	e->off = sa->used;
	e->len = len;
	if (len)
		memcpy(sa->arena + sa->used, data, len);
	sa->used += len;
	sa->mem_sorted = 0;
	return 0;
}

int tfk_shufall_add(struct tfk_shufall *sa, const void *data, size_t len,
		    struct tfk_err *err)
{
	int rc;

	if (sa->emitted)
		return tfk_errf(err, TFK_EINVAL, "shuffle: record added after "
				"the output began");
	rc = hold(sa, sa->n_total, tfk_shuffle_epoch_seed(sa->seed, 0), data,
		  len, err);
	if (rc)
		return rc;
	sa->n_total++;
	sa->bytes_total += len;
	return 0;
}

/* Runs sorted for epoch 0 -> runs sorted for epoch: read every old run
 * back as input, spill anew, then let the old ones go. */
static int rekey_runs(struct tfk_shufall *sa, uint64_t epoch,
		      struct tfk_err *err)
{
	uint64_t base = tfk_shuffle_epoch_seed(sa->seed, epoch);
	size_t n_old = sa->n_runs, i;
	const char *dir = dir_name(sa);
	int rc = 0;

	for (i = 0; i < n_old && !rc; i++) {
		/* A copy: hold() may spill and so move sa->runs. */
		struct run old = sa->runs[i];
		struct rd r;

		memset(&r, 0, sizeof(r));
		r.run = &old;
		r.left = r.run->n;
		r.cap = sa->bufsize;
		r.buf = tfk_malloc(r.cap);
		if (!r.buf)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		sa->cur_mem += r.cap;
		while ((rc = rd_next(&r, base, dir, err)) == 1) {
			rc = hold(sa, r.idx, base, r.data, r.len, err);
			if (rc)
				break;
		}
		sa->cur_mem -= r.cap;
		tfk_free(r.buf);
	}
	if (rc)
		return rc;
	if (sa->n > 0)
		rc = spill(sa, err);
	if (rc)
		return rc;
	drop_runs(sa, 0, n_old);
	sa->runs_epoch = epoch;
	free_mem(sa);
	return 0;
}

int tfk_shufall_emit(struct tfk_shufall *sa, uint64_t epoch,
		     tfk_shuffle_emit_fn emit, void *ctx, struct tfk_err *err)
{
	uint64_t base = tfk_shuffle_epoch_seed(sa->seed, epoch);
	struct sink s = { emit, ctx, NULL };
	size_t i;
	int rc;

	if (!sa->emitted) {
		sa->emitted = 1;
		sa->mem_epoch = sa->runs_epoch = 0;
		if (sa->n_runs) {
			/* The tail joins the runs: one merge for all. */
			if (sa->n > 0 && (rc = spill(sa, err)))
				return rc;
			free_mem(sa);
		}
	}
	if (sa->n_runs == 0) {
		if (sa->mem_epoch != epoch) {
			for (i = 0; i < sa->n; i++)
				sa->ents[i].key = key_of(base, sa->ents[i].idx);
			sa->mem_epoch = epoch;
			sa->mem_sorted = 0;
		}
		if (!sa->mem_sorted) {
			sort_ents(sa->ents, sa->n);
			sa->mem_sorted = 1;
		}
		for (i = 0; i < sa->n; i++) {
			rc = emit(ctx, sa->arena + sa->ents[i].off,
				  sa->ents[i].len, err);
			if (rc)
				return rc;
		}
		return 0;
	}
	if (sa->runs_epoch != epoch) {
		rc = rekey_runs(sa, epoch, err);
		if (rc)
			return rc;
	}
	rc = reduce_runs(sa, base, err);
	if (rc)
		return rc;
	return merge(sa, 0, sa->n_runs, base, &s, err);
}

uint64_t tfk_shuffle_default_memory(void)
{
	/* Physical memory, not MemAvailable: the default is printed by
	 * --help and must not change from one run to the next. */
	long pages = sysconf(_SC_PHYS_PAGES);
	long psz = sysconf(_SC_PAGESIZE);
	uint64_t m = 0;

	if (pages > 0 && psz > 0)
		m = (uint64_t)pages * (uint64_t)psz / 4;
	m &= ~(uint64_t)((1 << 20) - 1);	/* whole MiB: prints as "NM" */
	if (m < (64u << 20))
		m = 64u << 20;
	return m;
}
