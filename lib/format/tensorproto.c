/*
 * tensorproto.c - TensorProto to and from tensors (tensorproto.h).
 */
#include "format/tensorproto.h"

#include "util/alloc.h"

#include <string.h>

#define DT_REF_OFFSET 100	/* DT_FLOAT_REF = 101 (types.proto) */

static int strip_ref(int t)
{
	return t > DT_REF_OFFSET ? t - DT_REF_OFFSET : t;
}

static int dtype_ok(int t)
{
	return t > 0 && t < 64 && tfk_dtype_size((enum tfk_dtype)t) > 0;
}

int tfk_shape_from_proto(const Tensorflow__TensorShapeProto *sp, int *rank,
			 int64_t *dims, struct tfk_err *err)
{
	size_t i;

	if (!sp || sp->unknown_rank) {
		*rank = sp ? -1 : 0;
		return 0;
	}
	if (sp->n_dim > TFK_MAX_RANK)
		return tfk_errf(err, TFK_EINVAL, "rank %zu is more than %d",
				sp->n_dim, TFK_MAX_RANK);
	*rank = (int)sp->n_dim;
	for (i = 0; i < sp->n_dim; i++)
		dims[i] = sp->dim[i]->size < 0 ? -1 : sp->dim[i]->size;
	return 0;
}


static int from_proto(const Tensorflow__TensorProto *tp, struct tfk_tensor *t,
		      struct tfk_err *err)
{
	int dt = strip_ref(tp->dtype), rank, rc;
	int64_t dims[TFK_MAX_RANK], n, i;
	size_t nv = 0, esz;
	char *d;

	memset(t, 0, sizeof(*t));
	if (!dtype_ok(dt))
		return tfk_errf(err, TFK_EINVAL, "tensor of DataType %d not "
				"supported", tp->dtype);
	rc = tfk_shape_from_proto(tp->tensor_shape, &rank, dims, err);
	if (rc)
		return rc;
	for (i = 0; i < rank; i++)
		if (rank < 0 || dims[i] < 0)
			return tfk_errf(err, TFK_EINVAL, "tensor with unknown "
					"shape");
	if (rank < 0)
		return tfk_errf(err, TFK_EINVAL, "tensor with unknown shape");
	rc = tfk_tensor_init(t, (enum tfk_dtype)dt, rank, dims, err);
	if (rc)
		return rc;
	n = tfk_tensor_numel(t);
	esz = tfk_dtype_size(t->dtype);
	d = t->data;
	if (dt == TFK_DT_STRING) {
		if (tp->n_string_val > (size_t)n)
			goto too_many;
		for (i = 0; i < n && tp->n_string_val; i++) {
			const ProtobufCBinaryData *b = &tp->string_val[
				i < (int64_t)tp->n_string_val ? i :
				(int64_t)tp->n_string_val - 1];

			rc = tfk_tensor_set_str(t, i, b->data ? (const void *)
						b->data : "", b->len, err);
			if (rc)
				return rc;
		}
		return 0;
	}
	if (tp->tensor_content.len) {
		if (tp->tensor_content.len != t->nbytes)
			return tfk_errf(err, TFK_EINVAL, "tensor_content has "
					"%zu bytes, shape needs %zu",
					tp->tensor_content.len, t->nbytes);
		memcpy(d, tp->tensor_content.data, t->nbytes);
		return 0;
	}
#define FILL(field, ctype, conv)					\
	do {								\
		nv = tp->n_##field;					\
		if (nv > (size_t)n)					\
			goto too_many;					\
		for (i = 0; i < n && nv; i++) {				\
			ctype v = conv(tp->field[i < (int64_t)nv ? i :	\
					       (int64_t)nv - 1]);	\
			memcpy(d + i * esz, &v, esz);			\
		}							\
	} while (0)
#define AS_IS(x) (x)
	switch (dt) {
	case TFK_DT_FLOAT: FILL(float_val, float, AS_IS); break;
	case TFK_DT_DOUBLE: FILL(double_val, double, AS_IS); break;
	case TFK_DT_INT32: FILL(int_val, int32_t, AS_IS); break;
	case TFK_DT_INT16: FILL(int_val, int16_t, (int16_t)); break;
	case TFK_DT_INT8: FILL(int_val, int8_t, (int8_t)); break;
	case TFK_DT_UINT8: FILL(int_val, uint8_t, (uint8_t)); break;
	case TFK_DT_INT64: FILL(int64_val, int64_t, AS_IS); break;
	case TFK_DT_BOOL: FILL(bool_val, uint8_t, !!); break;
	case TFK_DT_HALF: FILL(half_val, uint16_t, (uint16_t)); break;
	default:
		return tfk_errf(err, TFK_EINVAL, "tensor of %s not supported",
				tfk_dtype_name(t->dtype));
	}
#undef FILL
#undef AS_IS
	return 0;
too_many:
	return tfk_errf(err, TFK_EINVAL, "tensor has more values than its "
			"shape holds");
}

int tfk_tensor_from_proto(const Tensorflow__TensorProto *tp,
			  struct tfk_tensor *t, struct tfk_err *err)
{
	int rc = from_proto(tp, t, err);

	if (rc)
		tfk_tensor_release(t);
	return rc;
}

int tfk_tensor_proto_view(struct tfk_tensor_proto *p,
			  const struct tfk_tensor *t, struct tfk_err *err)
{
	int64_t i, n = tfk_tensor_numel(t);
	int k;

	memset(p, 0, sizeof(*p));
	tensorflow__tensor_proto__init(&p->tp);
	tensorflow__tensor_shape_proto__init(&p->shape);
	for (k = 0; k < t->rank; k++) {
		tensorflow__tensor_shape_proto__dim__init(&p->dim[k]);
		p->dim[k].size = t->shape[k];
		p->dimp[k] = &p->dim[k];
	}
	p->shape.n_dim = (size_t)t->rank;
	p->shape.dim = p->dimp;
	p->tp.tensor_shape = &p->shape;
	p->tp.dtype = (Tensorflow__DataType)t->dtype;
	if (t->dtype != TFK_DT_STRING) {
		p->tp.tensor_content.data = (uint8_t *)t->data;
		p->tp.tensor_content.len = t->nbytes;
		return 0;
	}
	if (!(p->strs = tfk_calloc((size_t)n + 1, sizeof(*p->strs))))
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		struct tfk_str s = tfk_tensor_str(t, i);

		p->strs[i].data = (uint8_t *)s.ptr;
		p->strs[i].len = s.len;
	}
	p->tp.n_string_val = (size_t)n;
	p->tp.string_val = p->strs;
	return 0;
}

void tfk_tensor_proto_release(struct tfk_tensor_proto *p)
{
	tfk_free(p->strs);
	p->strs = NULL;
}
