/*
 * tensor.h - dtypes and dense tensors, the values of the graph IR.
 *
 * Layout: a tensor is dtype + rank (0..TFK_MAX_RANK) + shape[rank] +
 * contiguous row-major data (last dimension fastest; NHWC for images, as
 * TensorFlow). nbytes = numel * tfk_dtype_size(dtype). A dimension of -1
 * means "unknown" and is only legal in shape descriptions while a graph is
 * built (struct tfk_tdesc), never in a tensor that holds data.
 *
 * dtype numbers are TensorFlow's DataType enum (types.proto), so
 * SavedModel, tensor bundles and event files need no mapping table.
 *
 * DT_STRING elements are struct tfk_str {ptr, len} pairs (arbitrary bytes,
 * not NUL-terminated). The bytes live either in storage the tensor owns
 * (tfk_tensor_set_str copies into append-only blocks that never move, so
 * earlier pointers stay valid) or anywhere the caller keeps alive (a
 * borrowed tensor may point its elements into a record buffer).
 *
 * Owner says who frees data: HEAP (this tensor, tfk_free), ARENA (an
 * executor's arena: never freed through the tensor), BORROWED (the caller
 * keeps it alive longer than the tensor), MAPPED (a mapped file; its
 * mapping outlives the tensor). Only HEAP data is freed by release/free.
 *
 * Quantization (int8/uint8/int16/int32 as TFLite): real = scale *
 * (q - zero_point), per tensor (axis -1, n 1) or per channel along axis
 * (n == shape[axis]). The tensor owns the scale/zero_point arrays.
 */
#ifndef TFK_TENSOR_H
#define TFK_TENSOR_H

#include "util/err.h"

#include <stddef.h>
#include <stdint.h>

/* TensorFlow's DataType numbers (tensorflow/core/framework/types.proto). */
enum tfk_dtype {
	TFK_DT_INVALID = 0,
	TFK_DT_FLOAT = 1,
	TFK_DT_DOUBLE = 2,
	TFK_DT_INT32 = 3,
	TFK_DT_UINT8 = 4,
	TFK_DT_INT16 = 5,
	TFK_DT_INT8 = 6,
	TFK_DT_STRING = 7,
	TFK_DT_INT64 = 9,
	TFK_DT_BOOL = 10,
	TFK_DT_HALF = 19
};

/* Bit of a dtype in a set of allowed types (all TF dtypes are < 64). */
#define TFK_DT_BIT(t) (1ull << (t))

#define TFK_MAX_RANK 8

/* One DT_STRING element: len bytes at ptr (ptr may be NULL when len 0). */
struct tfk_str {
	const char *ptr;
	size_t len;
};

enum tfk_owner {
	TFK_OWN_HEAP = 0,
	TFK_OWN_ARENA,
	TFK_OWN_BORROWED,
	TFK_OWN_MAPPED
};

/* Quantization parameters; n == 0: none. */
struct tfk_quant {
	int n;			/* 1 (per tensor) or shape[axis] */
	int axis;		/* -1 per tensor */
	float *scale;		/* n entries, owned */
	int64_t *zero_point;	/* n entries, owned */
};

struct tfk_strblock;		/* string storage, private to tensor.c */

struct tfk_tensor {
	enum tfk_dtype dtype;
	int rank;
	int64_t shape[TFK_MAX_RANK];
	void *data;		/* numel elements; struct tfk_str for strings */
	size_t nbytes;
	enum tfk_owner owner;
	struct tfk_quant quant;
	struct tfk_strblock *strs;	/* owned string bytes, or NULL */
};

/* Shape description while building: rank -1 = unknown rank, a dim of -1
 * = unknown size (e.g. the batch dimension). */
struct tfk_tdesc {
	enum tfk_dtype dtype;
	int rank;
	int64_t shape[TFK_MAX_RANK];
};

/* dtypes --------------------------------------------------------------- */

/* Bytes per element (sizeof(struct tfk_str) for DT_STRING); 0 for
 * TFK_DT_INVALID and numbers that are not in enum tfk_dtype. */
size_t tfk_dtype_size(enum tfk_dtype t);
/* An IEEE binary16 value (DT_HALF's element) as float, exactly
 * (subnormals, infinities and NaN included). */
float tfk_half_to_float(uint16_t h);
/* Element i of a numeric tensor (float, double, half, the integer types,
 * bool as 0/1) as a double, or as an int64 for the integer types and
 * bool (0 for others). */
double tfk_tensor_get_f64(const struct tfk_tensor *t, int64_t i);
int64_t tfk_tensor_get_i64(const struct tfk_tensor *t, int64_t i);
/* numpy's name as TF prints it ("float32", "int64", "string", "bool",
 * "float16"); "invalid" for unknown numbers. Static storage. */
const char *tfk_dtype_name(enum tfk_dtype t);
/* TensorFlow's enum spelling ("DT_FLOAT"), as SavedModel text shows it;
 * "DT_INVALID" for unknown numbers. Static storage. */
const char *tfk_dtype_tf_name(enum tfk_dtype t);
/* Parse either spelling ("float32", "DT_FLOAT"), plus Keras' "float"
 * (float32), "half" and "double". 0 and *t, or TFK_EINVAL. */
int tfk_dtype_parse(const char *s, enum tfk_dtype *t);

/* Shapes --------------------------------------------------------------- */

/*
 * Element count of a concrete shape into *n (1 for rank 0). Returns 0,
 * or TFK_EINVAL when rank is outside 0..TFK_MAX_RANK, a dimension is
 * negative (unknown), or the count times elem_size would overflow
 * SIZE_MAX or INT64_MAX (elem_size 0 checks the count only).
 */
int tfk_shape_numel(int rank, const int64_t *shape, size_t elem_size,
		    int64_t *n, struct tfk_err *err);
/* "[2, 3]" / "[?, 784]" / "[]" / "<unknown>" (rank -1) into buf (always
 * NUL-terminated, truncated to n). Returns buf, for use in messages. */
char *tfk_shape_str(int rank, const int64_t *shape, char *buf, size_t n);
/* 1 if the ranks and every dimension are equal (unknown dims compare as
 * values: -1 == -1). */
int tfk_shape_equal(int ra, const int64_t *a, int rb, const int64_t *b);

/* Tensors -------------------------------------------------------------- */

/* Default of TFK_MAX_TENSOR_BYTES: above any tensor a CPU model
 * feeds or holds in practice (TensorFlow's own TensorProto is capped
 * at 2 GiB by protobuf), and the same on every machine, so a file
 * that loads here loads everywhere. */
#define TFK_TENSOR_MAX_BYTES_DEFAULT (4ull << 30)

/*
 * Check that a tensor of dtype and shape fits the tensor byte budget,
 * TFK_MAX_TENSOR_BYTES (util/limit.h; default above), before anything
 * is allocated for it: every shape read from a file (.npy, a Const, a
 * checkpoint) or inferred from feeds passes here. 0, or TFK_EINVAL:
 * "tensor float32 [65536, 65536] is 17179869184 bytes, more than the
 * limit of 4294967296 (TFK_MAX_TENSOR_BYTES)", the tfk_shape_numel
 * errors, "unsupported dtype 99", or the budget's own parse error.
 */
int tfk_tensor_check_size(enum tfk_dtype dtype, int rank,
			  const int64_t *shape, struct tfk_err *err);

/*
 * Make *t a heap tensor of dtype and shape with zeroed data (strings:
 * all empty). t is caller-owned storage; pair with tfk_tensor_release.
 * Returns 0, TFK_EINVAL (bad dtype, rank, negative dim, size overflow,
 * over the tfk_tensor_check_size budget: *t is left empty and
 * releasable) or TFK_ENOMEM.
 */
int tfk_tensor_init(struct tfk_tensor *t, enum tfk_dtype dtype, int rank,
		    const int64_t *shape, struct tfk_err *err);
/*
 * Make *t describe data it does not own (owner BORROWED, ARENA or
 * MAPPED): no allocation. Fails with TFK_EINVAL like tfk_tensor_init,
 * and when nbytes is not exactly the shape's byte size.
 */
int tfk_tensor_init_view(struct tfk_tensor *t, enum tfk_dtype dtype,
			 int rank, const int64_t *shape, void *data,
			 size_t nbytes, enum tfk_owner owner,
			 struct tfk_err *err);
/* Free what t owns (HEAP data, string storage, quant arrays) and leave
 * it empty (rank 0, no data). NULL is fine. */
void tfk_tensor_release(struct tfk_tensor *t);

/* Heap-allocated struct + tfk_tensor_init; *out NULL on failure. */
int tfk_tensor_new(struct tfk_tensor **out, enum tfk_dtype dtype, int rank,
		   const int64_t *shape, struct tfk_err *err);
/* Release and free the struct. NULL is fine. */
void tfk_tensor_free(struct tfk_tensor *t);

/* Elements (1 for a scalar). The shape is concrete by construction. */
int64_t tfk_tensor_numel(const struct tfk_tensor *t);

/*
 * A view of t's data with another shape of the same element count; at
 * most one dimension may be -1 and is then computed (as tf.reshape).
 * view is filled as BORROWED (no quant params); t must outlive it.
 * TFK_EINVAL "cannot reshape [2, 3] into [4, -1]" when counts differ.
 */
int tfk_tensor_reshape(const struct tfk_tensor *t, int rank,
		       const int64_t *shape, struct tfk_tensor *view,
		       struct tfk_err *err);

/*
 * Deep copy of src into caller storage dst (HEAP data, own string
 * bytes, own quant arrays). dst is overwritten, not released first.
 * 0, TFK_EINVAL or TFK_ENOMEM (dst then left empty).
 */
int tfk_tensor_copy(struct tfk_tensor *dst, const struct tfk_tensor *src,
		    struct tfk_err *err);

/* 1 if a and b have the same dtype, shape and element values (strings
 * by bytes; floats bitwise, so NaN == NaN with the same bits). */
int tfk_tensor_equal(const struct tfk_tensor *a, const struct tfk_tensor *b);

/*
 * Set DT_STRING element i to a copy of p[0..n) in t's own storage
 * (earlier elements' pointers stay valid). TFK_EINVAL for a non-string
 * tensor or i out of range, TFK_ENOMEM (element i unchanged).
 */
int tfk_tensor_set_str(struct tfk_tensor *t, int64_t i, const void *p,
		       size_t n, struct tfk_err *err);
/* Element i of a DT_STRING tensor (borrowed; valid while t and its
 * storage are). */
static inline struct tfk_str tfk_tensor_str(const struct tfk_tensor *t,
					    int64_t i)
{
	return ((const struct tfk_str *)t->data)[i];
}
/* Forget all owned string bytes (elements become empty) but keep the
 * storage blocks for reuse: what an executor does between runs. */
void tfk_tensor_clear_strs(struct tfk_tensor *t);

/*
 * Attach quantization parameters (copied): n 1 with axis -1 (per
 * tensor), or n == shape[axis] (per channel). Only for INT8, UINT8,
 * INT16 and INT32 tensors; scales must be finite and > 0. Replaces any
 * earlier ones. 0, TFK_EINVAL (message says which rule) or TFK_ENOMEM.
 */
int tfk_tensor_set_quant(struct tfk_tensor *t, int n, int axis,
			 const float *scale, const int64_t *zero_point,
			 struct tfk_err *err);

/* The description of a concrete tensor. */
void tfk_tensor_desc(const struct tfk_tensor *t, struct tfk_tdesc *d);

#endif
