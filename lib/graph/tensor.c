/*
 * tensor.c - dtypes and dense tensors (see tensor.h).
 *
 * String bytes go to append-only blocks chained from the tensor: setting
 * an element never moves bytes of other elements, so pointers handed
 * out stay valid, and one allocation serves many short strings. One
 * growable buffer was rejected (a realloc would move every element) and
 * so was one allocation per element (allocator overhead per token).
 * Overwriting an element leaves its old bytes as garbage in the block
 * until tfk_tensor_clear_strs: tensors are written once per run.
 *
 * Every heap tensor passes tfk_tensor_check_size before its calloc, so
 * one place holds shapes read from files (and inferred from them) to
 * TFK_MAX_TENSOR_BYTES; callers that only describe memory (views,
 * executor arena slices) call it themselves where the shape is made.
 */
#include "graph/tensor.h"
#include "util/alloc.h"
#include "util/limit.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

struct tfk_strblock {
	struct tfk_strblock *next;
	size_t used, cap;
	char data[];
};

#define STRBLOCK_MIN 4096

struct dt_info {
	enum tfk_dtype t;
	size_t size;
	const char *name, *tf;
};

static const struct dt_info dts[] = {
	{ TFK_DT_FLOAT, 4, "float32", "DT_FLOAT" },
	{ TFK_DT_DOUBLE, 8, "float64", "DT_DOUBLE" },
	{ TFK_DT_INT32, 4, "int32", "DT_INT32" },
	{ TFK_DT_UINT8, 1, "uint8", "DT_UINT8" },
	{ TFK_DT_INT16, 2, "int16", "DT_INT16" },
	{ TFK_DT_INT8, 1, "int8", "DT_INT8" },
	{ TFK_DT_STRING, sizeof(struct tfk_str), "string", "DT_STRING" },
	{ TFK_DT_INT64, 8, "int64", "DT_INT64" },
	{ TFK_DT_BOOL, 1, "bool", "DT_BOOL" },
	{ TFK_DT_HALF, 2, "float16", "DT_HALF" },
};

static const struct dt_info *dt_find(enum tfk_dtype t)
{
	size_t i;

	for (i = 0; i < sizeof(dts) / sizeof(dts[0]); i++)
		if (dts[i].t == t)
			return &dts[i];
	return NULL;
}

float tfk_half_to_float(uint16_t h)
{
	int e = (h >> 10) & 0x1f, mant = h & 0x3ff;
	float v;

	if (e == 0)
		v = ldexpf((float)mant, -24);
	else if (e == 31)
		v = mant ? NAN : INFINITY;
	else
		v = ldexpf((float)(mant | 0x400), e - 25);
	return (h & 0x8000) ? -v : v;
}

int64_t tfk_tensor_get_i64(const struct tfk_tensor *t, int64_t i)
{
	switch (t->dtype) {
	case TFK_DT_INT8: return ((const int8_t *)t->data)[i];
	case TFK_DT_UINT8: return ((const uint8_t *)t->data)[i];
	case TFK_DT_INT16: return ((const int16_t *)t->data)[i];
	case TFK_DT_INT32: return ((const int32_t *)t->data)[i];
	case TFK_DT_INT64: return ((const int64_t *)t->data)[i];
	case TFK_DT_BOOL: return ((const uint8_t *)t->data)[i] != 0;
	default: return 0;
	}
}

double tfk_tensor_get_f64(const struct tfk_tensor *t, int64_t i)
{
	switch (t->dtype) {
	case TFK_DT_FLOAT: return ((const float *)t->data)[i];
	case TFK_DT_DOUBLE: return ((const double *)t->data)[i];
	case TFK_DT_HALF:
		return tfk_half_to_float(((const uint16_t *)t->data)[i]);
	default: return (double)tfk_tensor_get_i64(t, i);
	}
}

size_t tfk_dtype_size(enum tfk_dtype t)
{
	const struct dt_info *d = dt_find(t);

	return d ? d->size : 0;
}

const char *tfk_dtype_name(enum tfk_dtype t)
{
	const struct dt_info *d = dt_find(t);

	return d ? d->name : "invalid";
}

const char *tfk_dtype_tf_name(enum tfk_dtype t)
{
	const struct dt_info *d = dt_find(t);

	return d ? d->tf : "DT_INVALID";
}

int tfk_dtype_parse(const char *s, enum tfk_dtype *t)
{
	size_t i;

	for (i = 0; i < sizeof(dts) / sizeof(dts[0]); i++) {
		if (!strcmp(s, dts[i].name) || !strcmp(s, dts[i].tf)) {
			*t = dts[i].t;
			return 0;
		}
	}
	if (!strcmp(s, "float")) {
		*t = TFK_DT_FLOAT;
		return 0;
	}
	if (!strcmp(s, "double")) {
		*t = TFK_DT_DOUBLE;
		return 0;
	}
	if (!strcmp(s, "half")) {
		*t = TFK_DT_HALF;
		return 0;
	}
	return TFK_EINVAL;
}

int tfk_shape_numel(int rank, const int64_t *shape, size_t elem_size,
		    int64_t *n, struct tfk_err *err)
{
	char b[128];
	uint64_t c = 1, lim = INT64_MAX;
	int i;

	if (rank < 0 || rank > TFK_MAX_RANK)
		return tfk_errf(err, TFK_EINVAL, "rank %d outside 0..%d",
				rank, TFK_MAX_RANK);
	if (SIZE_MAX < lim)
		lim = SIZE_MAX;
	if (elem_size)
		lim /= elem_size;
	for (i = 0; i < rank; i++) {
		if (shape[i] < 0)
			return tfk_errf(err, TFK_EINVAL,
					"shape %s: dim %d is not known",
					tfk_shape_str(rank, shape, b, sizeof(b)), i);
		if (shape[i] && c > lim / (uint64_t)shape[i])
			return tfk_errf(err, TFK_EINVAL,
					"shape %s: byte size overflows",
					tfk_shape_str(rank, shape, b, sizeof(b)));
		c *= (uint64_t)shape[i];
	}
	*n = (int64_t)c;
	return 0;
}

char *tfk_shape_str(int rank, const int64_t *shape, char *buf, size_t n)
{
	size_t o = 0;
	int i;

	if (!n)
		return buf;
	buf[0] = 0;
	if (rank < 0) {
		snprintf(buf, n, "<unknown>");
		return buf;
	}
	o += snprintf(buf + o, n - o, "[");
	for (i = 0; i < rank && i < TFK_MAX_RANK && o < n; i++) {
		if (shape[i] < 0)
			o += snprintf(buf + o, n - o, "%s?", i ? ", " : "");
		else
			o += snprintf(buf + o, n - o, "%s%lld", i ? ", " : "",
				      (long long)shape[i]);
	}
	if (o < n)
		snprintf(buf + o, n - o, "]");
	return buf;
}

int tfk_shape_equal(int ra, const int64_t *a, int rb, const int64_t *b)
{
	int i;

	if (ra != rb)
		return 0;
	for (i = 0; i < ra; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

static int check_meta(enum tfk_dtype dtype, int rank, const int64_t *shape,
		      int64_t *n, struct tfk_err *err)
{
	size_t es = tfk_dtype_size(dtype);

	if (!es)
		return tfk_errf(err, TFK_EINVAL, "unsupported dtype %d",
				(int)dtype);
	return tfk_shape_numel(rank, shape, es, n, err);
}

static void set_meta(struct tfk_tensor *t, enum tfk_dtype dtype, int rank,
		     const int64_t *shape, int64_t n)
{
	memset(t, 0, sizeof(*t));
	t->dtype = dtype;
	t->rank = rank;
	if (rank)
		memcpy(t->shape, shape, rank * sizeof(shape[0]));
	t->nbytes = (size_t)n * tfk_dtype_size(dtype);
}

int tfk_tensor_check_size(enum tfk_dtype dtype, int rank,
			  const int64_t *shape, struct tfk_err *err)
{
	uint64_t max, bytes;
	int64_t n;
	char b[128];
	int rc;

	rc = check_meta(dtype, rank, shape, &n, err);
	if (rc)
		return rc;
	rc = tfk_limit_get("TFK_MAX_TENSOR_BYTES",
			   TFK_TENSOR_MAX_BYTES_DEFAULT, &max, err);
	if (rc)
		return rc;
	bytes = (uint64_t)n * tfk_dtype_size(dtype);
	if (bytes > max)
		return tfk_errf(err, TFK_EINVAL, "tensor %s %s is %" PRIu64
				" bytes, more than the limit of %" PRIu64
				" (TFK_MAX_TENSOR_BYTES)",
				tfk_dtype_name(dtype),
				tfk_shape_str(rank, shape, b, sizeof(b)),
				bytes, max);
	return 0;
}

int tfk_tensor_init(struct tfk_tensor *t, enum tfk_dtype dtype, int rank,
		    const int64_t *shape, struct tfk_err *err)
{
	int64_t n;
	int rc;

	memset(t, 0, sizeof(*t));
	rc = tfk_tensor_check_size(dtype, rank, shape, err);
	if (!rc)
		rc = check_meta(dtype, rank, shape, &n, err);
	if (rc)
		return rc;
	set_meta(t, dtype, rank, shape, n);
	t->owner = TFK_OWN_HEAP;
	t->data = tfk_calloc(1, t->nbytes ? t->nbytes : 1);
	if (!t->data) {
		memset(t, 0, sizeof(*t));
		return tfk_errf(err, TFK_ENOMEM, "out of memory for a tensor "
				"of %zu bytes", (size_t)n * tfk_dtype_size(dtype));
	}
	return 0;
}

int tfk_tensor_init_view(struct tfk_tensor *t, enum tfk_dtype dtype,
			 int rank, const int64_t *shape, void *data,
			 size_t nbytes, enum tfk_owner owner,
			 struct tfk_err *err)
{
	int64_t n;
	int rc;

	memset(t, 0, sizeof(*t));
	rc = check_meta(dtype, rank, shape, &n, err);
	if (rc)
		return rc;
	if ((size_t)n * tfk_dtype_size(dtype) != nbytes)
		return tfk_errf(err, TFK_EINVAL, "%zu bytes for %lld elements "
				"of %s", nbytes, (long long)n,
				tfk_dtype_name(dtype));
	set_meta(t, dtype, rank, shape, n);
	t->owner = owner == TFK_OWN_HEAP ? TFK_OWN_BORROWED : owner;
	t->data = data;
	return 0;
}

static void quant_release(struct tfk_quant *q)
{
	tfk_free(q->scale);
	tfk_free(q->zero_point);
	memset(q, 0, sizeof(*q));
}

void tfk_tensor_release(struct tfk_tensor *t)
{
	struct tfk_strblock *b, *next;

	if (!t)
		return;
	if (t->owner == TFK_OWN_HEAP)
		tfk_free(t->data);
	for (b = t->strs; b; b = next) {
		next = b->next;
		tfk_free(b);
	}
	quant_release(&t->quant);
	memset(t, 0, sizeof(*t));
}

int tfk_tensor_new(struct tfk_tensor **out, enum tfk_dtype dtype, int rank,
		   const int64_t *shape, struct tfk_err *err)
{
	struct tfk_tensor *t = tfk_malloc(sizeof(*t));
	int rc;

	*out = NULL;
	if (!t)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	rc = tfk_tensor_init(t, dtype, rank, shape, err);
	if (rc) {
		tfk_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

void tfk_tensor_free(struct tfk_tensor *t)
{
	if (!t)
		return;
	tfk_tensor_release(t);
	tfk_free(t);
}

int64_t tfk_tensor_numel(const struct tfk_tensor *t)
{
	int64_t n = 1;
	int i;

	for (i = 0; i < t->rank; i++)
		n *= t->shape[i];
	return n;
}

int tfk_tensor_reshape(const struct tfk_tensor *t, int rank,
		       const int64_t *shape, struct tfk_tensor *view,
		       struct tfk_err *err)
{
	int64_t s[TFK_MAX_RANK], known = 1, n = tfk_tensor_numel(t);
	char b1[128], b2[128];
	int i, unk = -1;

	if (rank < 0 || rank > TFK_MAX_RANK)
		return tfk_errf(err, TFK_EINVAL, "rank %d outside 0..%d",
				rank, TFK_MAX_RANK);
	for (i = 0; i < rank; i++) {
		s[i] = shape[i];
		if (s[i] == -1 && unk < 0) {
			unk = i;
			continue;
		}
		if (s[i] < 0 || (s[i] && known > INT64_MAX / s[i]))
			goto bad;
		known *= s[i];
	}
	if (unk >= 0) {
		if (!known || n % known)
			goto bad;
		s[unk] = n / known;
	} else if (known != n) {
		goto bad;
	}
	*view = *t;
	view->rank = rank;
	memcpy(view->shape, s, rank * sizeof(s[0]));
	view->owner = TFK_OWN_BORROWED;
	view->strs = NULL;
	memset(&view->quant, 0, sizeof(view->quant));
	return 0;
bad:
	return tfk_errf(err, TFK_EINVAL, "cannot reshape %s into %s",
			tfk_shape_str(t->rank, t->shape, b1, sizeof(b1)),
			tfk_shape_str(rank, shape, b2, sizeof(b2)));
}

int tfk_tensor_copy(struct tfk_tensor *dst, const struct tfk_tensor *src,
		    struct tfk_err *err)
{
	int64_t i, n;
	int rc;

	rc = tfk_tensor_init(dst, src->dtype, src->rank, src->shape, err);
	if (rc)
		return rc;
	n = tfk_tensor_numel(src);
	if (src->dtype == TFK_DT_STRING) {
		for (i = 0; i < n; i++) {
			struct tfk_str s = tfk_tensor_str(src, i);

			rc = tfk_tensor_set_str(dst, i, s.ptr, s.len, err);
			if (rc)
				goto fail;
		}
	} else if (src->nbytes) {
		memcpy(dst->data, src->data, src->nbytes);
	}
	if (src->quant.n) {
		rc = tfk_tensor_set_quant(dst, src->quant.n, src->quant.axis,
					  src->quant.scale,
					  src->quant.zero_point, err);
		if (rc)
			goto fail;
	}
	return 0;
fail:
	tfk_tensor_release(dst);
	return rc;
}

int tfk_tensor_equal(const struct tfk_tensor *a, const struct tfk_tensor *b)
{
	int64_t i, n;

	if (a->dtype != b->dtype ||
	    !tfk_shape_equal(a->rank, a->shape, b->rank, b->shape))
		return 0;
	if (a->dtype != TFK_DT_STRING)
		return !a->nbytes || !memcmp(a->data, b->data, a->nbytes);
	n = tfk_tensor_numel(a);
	for (i = 0; i < n; i++) {
		struct tfk_str x = tfk_tensor_str(a, i), y = tfk_tensor_str(b, i);

		if (x.len != y.len || (x.len && memcmp(x.ptr, y.ptr, x.len)))
			return 0;
	}
	return 1;
}

int tfk_tensor_set_str(struct tfk_tensor *t, int64_t i, const void *p,
		       size_t n, struct tfk_err *err)
{
	struct tfk_strblock *b = t->strs;
	struct tfk_str *e;

	if (t->dtype != TFK_DT_STRING)
		return tfk_errf(err, TFK_EINVAL, "set_str on a %s tensor",
				tfk_dtype_name(t->dtype));
	if (i < 0 || i >= tfk_tensor_numel(t))
		return tfk_errf(err, TFK_EINVAL, "string element %lld out of "
				"range", (long long)i);
	e = &((struct tfk_str *)t->data)[i];
	if (!n) {
		e->ptr = NULL;
		e->len = 0;
		return 0;
	}
	/* Only the newest block (the head) is appended to: older ones are
	 * full enough, and a scan would make many sets quadratic. */
	if (!b || b->cap - b->used < n) {
		size_t cap = n > STRBLOCK_MIN ? n : STRBLOCK_MIN;

		if (b && b->cap * 2 > cap && b->cap * 2 >= n)
			cap = b->cap * 2;
		if (cap > SIZE_MAX - sizeof(*b))
			return tfk_errf(err, TFK_ENOMEM, "string too large");
		b = tfk_malloc(sizeof(*b) + cap);
		if (!b)
			return tfk_errf(err, TFK_ENOMEM, "out of memory for "
					"a string of %zu bytes", n);
		b->used = 0;
		b->cap = cap;
		b->next = t->strs;
		t->strs = b;
	}
	memcpy(b->data + b->used, p, n);
	e->ptr = b->data + b->used;
	e->len = n;
	b->used += n;
	return 0;
}

void tfk_tensor_clear_strs(struct tfk_tensor *t)
{
	struct tfk_strblock *b;

	if (t->dtype == TFK_DT_STRING && t->data)
		memset(t->data, 0, t->nbytes);
	for (b = t->strs; b; b = b->next)
		b->used = 0;
}

int tfk_tensor_set_quant(struct tfk_tensor *t, int n, int axis,
			 const float *scale, const int64_t *zero_point,
			 struct tfk_err *err)
{
	float *s;
	int64_t *z;
	int i;

	if (t->dtype != TFK_DT_INT8 && t->dtype != TFK_DT_UINT8 &&
	    t->dtype != TFK_DT_INT16 && t->dtype != TFK_DT_INT32)
		return tfk_errf(err, TFK_EINVAL, "quantization parameters on "
				"a %s tensor", tfk_dtype_name(t->dtype));
	if (axis == -1) {
		if (n != 1)
			return tfk_errf(err, TFK_EINVAL, "per-tensor "
					"quantization needs 1 scale, got %d", n);
	} else if (axis < 0 || axis >= t->rank) {
		return tfk_errf(err, TFK_EINVAL, "quantization axis %d "
				"outside rank %d", axis, t->rank);
	} else if (n != t->shape[axis]) {
		return tfk_errf(err, TFK_EINVAL, "quantization along axis %d "
				"needs %lld scales, got %d", axis,
				(long long)t->shape[axis], n);
	}
	for (i = 0; i < n; i++)
		if (!(scale[i] > 0) || scale[i] > 3.4e38f)
			return tfk_errf(err, TFK_EINVAL, "quantization scale "
					"%d is %g: must be finite and > 0", i,
					scale[i]);
	s = tfk_malloc(n * sizeof(*s));
	z = tfk_malloc(n * sizeof(*z));
	if (!s || !z) {
		tfk_free(s);
		tfk_free(z);
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	memcpy(s, scale, n * sizeof(*s));
	memcpy(z, zero_point, n * sizeof(*z));
	quant_release(&t->quant);
	t->quant.n = n;
	t->quant.axis = axis;
	t->quant.scale = s;
	t->quant.zero_point = z;
	return 0;
}

void tfk_tensor_desc(const struct tfk_tensor *t, struct tfk_tdesc *d)
{
	d->dtype = t->dtype;
	d->rank = t->rank;
	memset(d->shape, 0, sizeof(d->shape));
	memcpy(d->shape, t->shape, t->rank * sizeof(t->shape[0]));
}
