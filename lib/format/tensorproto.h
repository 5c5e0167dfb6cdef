/*
 * tensorproto.h - tensorflow.TensorProto (formats/tensor.proto) to and
 * from tensors: a SavedModel's constants and attrs, and the tensors of
 * TF Serving's gRPC requests and responses.
 */
#ifndef TFK_TENSORPROTO_H
#define TFK_TENSORPROTO_H

#include "formats/tensor.pb-c.h"
#include "graph/tensor.h"
#include "util/err.h"

#include <stdint.h>

/* A TensorShapeProto's rank (-1: unknown rank; 0 for a NULL proto)
 * and sizes (-1: unknown); TFK_EINVAL above TFK_MAX_RANK. */
int tfk_shape_from_proto(const Tensorflow__TensorShapeProto *sp, int *rank,
			 int64_t *dims, struct tfk_err *err);

/*
 * TensorProto -> heap tensor *t (released by the caller; empty after a
 * failure), as TensorFlow's
 * Tensor::FromProto reads it: tensor_content, or the typed repeated
 * field with fewer values than elements repeating the last one;
 * reference dtypes (DT_FLOAT_REF) as their plain ones. Errors
 * (TFK_EINVAL): an unsupported dtype, an unknown shape, more values
 * than the shape holds, tensor_content of the wrong size; and those of
 * tfk_tensor_init (the size limit).
 */
int tfk_tensor_from_proto(const Tensorflow__TensorProto *tp,
			  struct tfk_tensor *t, struct tfk_err *err);

/*
 * A TensorProto of t to pack, borrowing t's bytes (t must outlive it):
 * numbers in tensor_content, strings in string_val. Release with
 * tfk_tensor_proto_release; TFK_ENOMEM.
 */
struct tfk_tensor_proto {
	Tensorflow__TensorProto tp;
	Tensorflow__TensorShapeProto shape;
	Tensorflow__TensorShapeProto__Dim dim[TFK_MAX_RANK];
	Tensorflow__TensorShapeProto__Dim *dimp[TFK_MAX_RANK];
	ProtobufCBinaryData *strs;
};
int tfk_tensor_proto_view(struct tfk_tensor_proto *p,
			  const struct tfk_tensor *t, struct tfk_err *err);
void tfk_tensor_proto_release(struct tfk_tensor_proto *p);

#endif
