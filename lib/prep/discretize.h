/*
 * discretize.h - keras.layers.Discretization: bucket floats by
 * boundaries, and learn boundaries from data (adapt).
 *
 * Bucketing (tf.raw_ops.Bucketize, numpy.digitize with right=False): the
 * index of x is the number of boundaries b with b <= x, so with
 * boundaries [0, 1, 2] the buckets are (-inf,0) (0), [0,1) (1), [1,2)
 * (2) and [2,inf) (3). NaN goes to the last bucket (it compares below no
 * boundary, as upper_bound). Output modes other than int are
 * CategoryEncoding over len(boundaries) + 1 (tfk_catenc).
 *
 * Adapt is Keras' own approximate quantile method
 * (keras/src/layers/preprocessing/discretization.py), reproduced step for
 * step so that the same batches give the same boundaries:
 *   summarize(batch):  sort; with inc = size * epsilon, keep every
 *                      int(max(inc, 1))-th value from index int(inc), each
 *                      weighing max(inc, 1);
 *   merge:             the batch summary and the running one, by value;
 *   compress(eps):     when the summary has at least 1/eps points,
 *                      re-sample it at cumulative-weight fractions
 *                      eps, 2 eps, .., by linear interpolation (np.interp)
 *                      of the values and of the cumulative weights;
 *   boundaries:        compress(1 / num_bins), all points but the last.
 * Values and weights are float32 and cumulative sums are accumulated in
 * float32 as numpy does; interpolation is in double. The result depends
 * on how the data was cut into batches, as in Keras.
 */
#ifndef TFK_DISCRETIZE_H
#define TFK_DISCRETIZE_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

struct tfk_discretize {
	float *bounds;		/* sorted bin boundaries */
	size_t n_bounds;
	long num_bins;		/* adapt target (0: fixed boundaries) */
	double epsilon;		/* Keras default 0.01 */
	float *sv, *sw;		/* running summary: values, weights */
	size_t sn;
};

/* Fixed boundaries (copied): must be non-decreasing and not NaN
 * (TFK_EINVAL naming the first bad one). */
int tfk_discretize_init(struct tfk_discretize *d, const float *bounds,
			size_t n, struct tfk_err *err);
/* For adapt: num_bins >= 1, 0 < epsilon < 1. */
int tfk_discretize_init_adapt(struct tfk_discretize *d, long num_bins,
			      double epsilon, struct tfk_err *err);
void tfk_discretize_release(struct tfk_discretize *d);

/* Fold one batch of n values into the summary (Keras update_state).
 * TFK_EINVAL for a NaN or infinite value. */
int tfk_discretize_update(struct tfk_discretize *d, const float *v,
			  size_t n, struct tfk_err *err);
/* Boundaries from the summary (finalize_state); may be called again
 * after more updates. */
int tfk_discretize_finish(struct tfk_discretize *d, struct tfk_err *err);

/* Bucket index of x: number of boundaries <= x. */
int64_t tfk_discretize_bucket(const struct tfk_discretize *d, double x);

#endif
