/*
 * discretize.c - Discretization: bucketize, and Keras' summary-based
 * quantile adapt (see discretize.h for the algorithm and its source).
 *
 * The summary stays small (about 1/epsilon points after each compress),
 * so adapt streams over any amount of data in constant memory. A
 * streaming sketch with guaranteed error (Greenwald-Khanna) was rejected:
 * the point is to give the boundaries Keras gives.
 */
#include "prep/discretize.h"
#include "util/alloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int tfk_discretize_init(struct tfk_discretize *d, const float *bounds,
			size_t n, struct tfk_err *err)
{
	size_t i;

	memset(d, 0, sizeof(*d));
	for (i = 0; i < n; i++) {
		if (isnan(bounds[i]))
			return tfk_errf(err, TFK_EINVAL, "bin_boundaries[%zu]: "
					"NaN", i);
		if (i && bounds[i] < bounds[i - 1])
			return tfk_errf(err, TFK_EINVAL, "bin_boundaries[%zu]: "
					"%g is below the one before (%g): "
					"boundaries must be sorted", i,
					(double)bounds[i], (double)bounds[i - 1]);
	}
	d->bounds = tfk_malloc((n ? n : 1) * sizeof(*d->bounds));
	if (!d->bounds)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	if (n)
		memcpy(d->bounds, bounds, n * sizeof(*bounds));
	d->n_bounds = n;
	return 0;
}

int tfk_discretize_init_adapt(struct tfk_discretize *d, long num_bins,
			      double epsilon, struct tfk_err *err)
{
	memset(d, 0, sizeof(*d));
	if (num_bins < 1)
		return tfk_errf(err, TFK_EINVAL, "num_bins: must be >= 1, got "
				"%ld", num_bins);
	if (!(epsilon > 0 && epsilon < 1))
		return tfk_errf(err, TFK_EINVAL, "epsilon: must be in (0, 1), "
				"got %g", epsilon);
	d->num_bins = num_bins;
	d->epsilon = epsilon;
	return 0;
}

void tfk_discretize_release(struct tfk_discretize *d)
{
	if (!d)
		return;
	tfk_free(d->bounds);
	tfk_free(d->sv);
	tfk_free(d->sw);
	memset(d, 0, sizeof(*d));
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return x < y ? -1 : x > y;
}

/* numpy.interp(x, xp, fp) for increasing xp (float32 data, in double). */
static double interp(double x, const float *xp, const double *fp, size_t n)
{
	size_t lo = 0, hi = n - 1, mid;
	double slope, r;

	if (x < xp[0])
		return fp[0];
	if (x >= xp[n - 1])
		return fp[n - 1];
	/* Largest j with xp[j] <= x (x < xp[n-1], so j < n - 1). */
	while (hi - lo > 1) {
		mid = (lo + hi) / 2;
		if ((double)xp[mid] <= x)
			lo = mid;
		else
			hi = mid;
	}
	slope = (fp[lo + 1] - fp[lo]) / ((double)xp[lo + 1] - (double)xp[lo]);
	r = slope * (x - (double)xp[lo]) + fp[lo];
	if (isnan(r)) {
		r = slope * (x - (double)xp[lo + 1]) + fp[lo + 1];
		if (isnan(r) && fp[lo] == fp[lo + 1])
			r = fp[lo];
	}
	return r;
}

/* numpy.arange(0.0, 1.0, eps).size: ceil(1 / eps). */
static size_t n_percents(double eps)
{
	return (size_t)ceil(1.0 / eps);
}

/*
 * compress_summary: re-sample (v, w, n) at eps, 2 eps, .. when
 * n * eps >= 1. Replaces the arrays in place (reallocating); *n changes.
 */
static int compress(float **v, float **w, size_t *n, double eps,
		    struct tfk_err *err)
{
	size_t k = n_percents(eps), i, m = *n;
	float *cw = NULL, *cwp = NULL, *nv = NULL, *nw = NULL;
	double *fv = NULL, *fcw = NULL, prev = 0;
	float acc = 0;
	int rc = 0;

	if ((double)m * eps < 1)
		return 0;
	cw = tfk_malloc(m * sizeof(*cw));
	cwp = tfk_malloc(m * sizeof(*cwp));
	fv = tfk_malloc(m * sizeof(*fv));
	fcw = tfk_malloc(m * sizeof(*fcw));
	nv = tfk_malloc(k * sizeof(*nv));
	nw = tfk_malloc(k * sizeof(*nw));
	if (!cw || !cwp || !fv || !fcw || !nv || !nw) {
		rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < m; i++) {
		acc += (*w)[i];		/* float32 cumsum, as numpy */
		cw[i] = acc;
	}
	for (i = 0; i < m; i++) {
		cwp[i] = cw[i] / cw[m - 1];
		fv[i] = (*v)[i];
		fcw[i] = cw[i];
	}
	for (i = 0; i < k; i++) {
		double pct = eps + (double)i * eps;
		double c = interp(pct, cwp, fcw, m);

		nv[i] = (float)interp(pct, cwp, fv, m);
		nw[i] = (float)(c - prev);
		prev = c;
	}
	tfk_free(*v);
	tfk_free(*w);
	*v = nv;
	*w = nw;
	*n = k;
	nv = nw = NULL;
out:
	tfk_free(cw);
	tfk_free(cwp);
	tfk_free(fv);
	tfk_free(fcw);
	tfk_free(nv);
	tfk_free(nw);
	return rc;
}

int tfk_discretize_update(struct tfk_discretize *d, const float *v,
			  size_t n, struct tfk_err *err)
{
	float *s = NULL, *mv = NULL, *mw = NULL;
	double inc, step;
	size_t i, j, k, nb, start, istep, mn;
	int rc;

	if (!d->num_bins)
		return tfk_errf(err, TFK_EINVAL, "adapt: boundaries were given, "
				"not num_bins");
	for (i = 0; i < n; i++)
		if (!isfinite(v[i]))
			return tfk_errf(err, TFK_EINVAL, "adapt: value %zu of the "
					"batch is %g", i, (double)v[i]);
	s = tfk_malloc((n ? n : 1) * sizeof(*s));
	if (!s)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	if (n)
		memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), cmp_float);
	/* summarize(): increment = elements / (1 / epsilon). */
	inc = (double)n / (1.0 / d->epsilon);
	step = inc > 1 ? inc : 1;
	start = (size_t)inc;
	istep = (size_t)step;
	nb = start < n ? (n - start + istep - 1) / istep : 0;
	mn = nb + d->sn;
	mv = tfk_malloc((mn ? mn : 1) * sizeof(*mv));
	mw = tfk_malloc((mn ? mn : 1) * sizeof(*mw));
	if (!mv || !mw) {
		rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
		goto fail;
	}
	/* merge_summaries(new, old): both sorted; merge by value. */
	for (i = 0, j = 0, k = 0; k < mn; k++) {
		if (j >= d->sn || (i < nb && s[start + i * istep] <= d->sv[j])) {
			mv[k] = s[start + i * istep];
			mw[k] = (float)step;
			i++;
		} else {
			mv[k] = d->sv[j];
			mw[k] = d->sw[j];
			j++;
		}
	}
	if ((rc = compress(&mv, &mw, &mn, d->epsilon, err)))
		goto fail;
	tfk_free(s);
	tfk_free(d->sv);
	tfk_free(d->sw);
	d->sv = mv;
	d->sw = mw;
	d->sn = mn;
	return 0;
fail:
	tfk_free(s);
	tfk_free(mv);
	tfk_free(mw);
	return rc;
}

int tfk_discretize_finish(struct tfk_discretize *d, struct tfk_err *err)
{
	float *v = NULL, *w = NULL;
	size_t n = d->sn;
	int rc;

	if (!d->num_bins)
		return tfk_errf(err, TFK_EINVAL, "adapt: boundaries were given, "
				"not num_bins");
	v = tfk_malloc((n ? n : 1) * sizeof(*v));
	w = tfk_malloc((n ? n : 1) * sizeof(*w));
	if (!v || !w) {
		tfk_free(v);
		tfk_free(w);
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	if (n) {
		memcpy(v, d->sv, n * sizeof(*v));
		memcpy(w, d->sw, n * sizeof(*w));
	}
	rc = compress(&v, &w, &n, 1.0 / (double)d->num_bins, err);
	tfk_free(w);
	if (rc) {
		tfk_free(v);
		return rc;
	}
	tfk_free(d->bounds);
	d->bounds = v;
	d->n_bounds = n ? n - 1 : 0;
	return 0;
}

int64_t tfk_discretize_bucket(const struct tfk_discretize *d, double x)
{
	size_t lo = 0, hi = d->n_bounds, mid;

	/* upper_bound: first boundary > x. */
	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (x < (double)d->bounds[mid])
			hi = mid;
		else
			lo = mid + 1;
	}
	if (isnan(x))
		return (int64_t)d->n_bounds;
	return (int64_t)lo;
}
