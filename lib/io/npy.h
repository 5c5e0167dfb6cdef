/*
 * npy.h - NumPy interop: .npy files, .npz archives, numpy's str() of
 * an array, and Python literals as arrays.
 *
 * .npy layout (numpy/lib/format.py, NEP 1):
 *   bytes 0..5   magic "\x93NUMPY"
 *   bytes 6, 7   format version major, minor (1.0, 2.0, 3.0)
 *   then         header length: uint16 little-endian (1.0) or uint32
 *                (2.0, 3.0: 3.0 allows UTF-8 in the header)
 *   then         the header: a Python dict literal
 *                "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"
 *                padded with spaces and ended by '\n' so that the data
 *                starts at a multiple of 64 bytes (numpy >= 1.? writes
 *                64; readers accept any)
 *   then         the elements, C order unless fortran_order, in descr's
 *                byte order: '<' little, '>' big, '|' not applicable,
 *                '=' native
 * descr types read: f2 f4 f8 i1 i2 i4 i8 u1 b1 (bool), S<n> (bytes,
 * trailing NULs stripped), U<n> (UCS-4, to UTF-8). Object arrays ('O',
 * pickles) are refused, never unpickled.
 * .npz: a zip archive of NAME.npy members (stored or deflated), read
 * with libarchive.
 */
#ifndef TFK_NPY_H
#define TFK_NPY_H

#include "graph/tensor.h"
#include "util/buf.h"
#include "util/err.h"

#include <stddef.h>

/*
 * Decode .npy bytes p[0..n) into *t (heap tensor; strings owned by t).
 * Errors TFK_ECORRUPT "byte OFF: what" (bad magic, version, header
 * syntax, short data), TFK_EINVAL (a dtype we do not hold: "descr '|O'
 * (object arrays) not supported"), TFK_ENOMEM. On failure *t is empty.
 */
int tfk_npy_decode(const void *p, size_t n, struct tfk_tensor *t,
		   struct tfk_err *err);

/*
 * Read PATH: a .npy file, or a .npz archive (by content: a zip's "PK"
 * magic) whose member KEY.npy is taken (key NULL: the archive must hold
 * exactly one member). Errors are prefixed "PATH: "; a missing member is
 * TFK_ENOTFOUND "PATH: no array 'k' (arrays: a, b)".
 */
int tfk_npy_read(const char *path, const char *key, struct tfk_tensor *t,
		 struct tfk_err *err);

/*
 * Encode t as .npy version 1.0 bytes, exactly as numpy.save writes the
 * same array (header padded to 64). DT_STRING becomes '|S<max len>'
 * (numpy would pickle an object array; a fixed-width bytes array loads
 * without allow_pickle). Appends to out. 0, TFK_EINVAL, TFK_ENOMEM.
 */
int tfk_npy_encode(const struct tfk_tensor *t, struct tfk_buf *out,
		   struct tfk_err *err);

/* Write t to path as .npy, atomically (io/out.h). */
int tfk_npy_write(const char *path, const struct tfk_tensor *t,
		  struct tfk_err *err);

/*
 * numpy's str(a) for t (what print() shows; numpy >= 1.14 defaults:
 * precision 8, floatmode 'maxprec', linewidth 75, threshold 1000 with
 * 3 edge items, sign '-'): "[[3.]]", "[3.  3.5 4. ]", "[1.e-05 1.e+05]",
 * "[ True False]", "[b'a' b'bc']". A scalar (rank 0) prints as numpy
 * prints a scalar of its type: "3.0", "1e-05", "7", "True", "b'x'".
 * Appends to out (no trailing newline).
 */
int tfk_npy_str(const struct tfk_tensor *t, struct tfk_buf *out,
		struct tfk_err *err);

/* A parsed Python literal (never evaluated: only these forms). */
enum tfk_lit_kind {
	TFK_LIT_INT,		/* 12, -3 (int64) */
	TFK_LIT_FLOAT,		/* 1.5, 2., 1e-3, .5 */
	TFK_LIT_BOOL,		/* True, False */
	TFK_LIT_STR,		/* 'a', "b", b'c' (escapes \\ \' \" \n \t
				 * \r \0 \xHH) */
	TFK_LIT_LIST,		/* [a, b], (a, b), (a,) */
	TFK_LIT_DICT		/* {'k': v, ...} with string keys */
};

struct tfk_lit {
	enum tfk_lit_kind kind;
	int64_t i;
	double f;
	char *s;		/* STR: bytes (NUL added), DICT: unused */
	size_t len;
	int n;			/* LIST/DICT: items */
	struct tfk_lit *items;	/* LIST: values; DICT: values */
	char **keys;		/* DICT: key strings */
};

/*
 * Parse a Python literal s into *v (owned; tfk_lit_release). Errors:
 * TFK_EINVAL "column C: what" (1-based). Depth is limited to 32.
 */
int tfk_lit_parse(const char *s, struct tfk_lit *v, struct tfk_err *err);
void tfk_lit_release(struct tfk_lit *v);

/*
 * np.array(v): nested lists must be rectangular; the dtype is float64
 * when any number is a float, else int64 for integers, bool for bools,
 * string for strings (no mixing strings or bools with numbers).
 * TFK_EINVAL "setting an array element with a sequence" style errors:
 * "ragged nested lists (dim 1: 2 vs 3)", "mixed strings and numbers".
 */
int tfk_lit_to_tensor(const struct tfk_lit *v, struct tfk_tensor *t,
		      struct tfk_err *err);

#endif
