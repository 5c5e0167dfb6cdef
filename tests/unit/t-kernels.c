/*
 * t-kernels.c - CPU kernels: each fast path against its _ref (the
 * specification) on random data over many broadcasting shapes, and the
 * _refs themselves against hand-computed values (NaN handling, integer
 * wrap-around, Cast truncation and saturation, Softmax, Sum, BiasAdd).
 *
 * Bounds: elementwise float fast paths compute the same operation in
 * the same precision as the _ref, so they must agree exactly, except
 * Sigmoid/Tanh (float expf/tanhf vs double): relative error <= 1e-6.
 * sgemm (own AVX-512 kernel or OpenBLAS) vs the triple loop: |c - ref|
 * <= 1e-5 * sum_l |a_il b_lj| (the summation-order error bound for
 * k <= 300 in float; the two k > 2000 shapes stay far inside it, 2e-7);
 * dgemm likewise with 1e-13.
 *
 * Fast ReluGrad and BiasAdd == _ref exactly; Softmax in float vs the
 * double _ref: absolute error <= 1e-6 (measured printed). The other
 * unary ops: Neg, Abs, Square, Sqrt, Sign, Floor exact (one
 * rounding either way); Rsqrt, Exp, Log, Log1p fast vs _ref <= 1e-6
 * relative (measured 1.5e-7). Every binary op, Pow, SquaredDifference
 * and the XGrad ops included, is bit for bit. Against numpy (float64,
 * tests/py/np_ref.py) on the same float32-representable inputs:
 * |ours - numpy| / max(|numpy|, 1) <= 2e-6 in float32 (measured max
 * 6.9e-8, Sigmoid), 1e-12 in float64; comparisons exact. Gradients
 * of every elementwise op by central differences in float64 through
 * the graph with an unknown batch dim: <= 1e-6 (each line prints its
 * max; typically 1e-10), including a broadcast only decided at run
 * time (BroadcastGradientArgs).
 */
#include "kernels/cpu.h"
#include "tap.h"
#include "gradcheck.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 88172645463325252ull;

static double urand(void)	/* xorshift64 (Marsaglia 2003) */
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (rng >> 11) * (1.0 / 9007199254740992.0);
}

static void fill(struct tfk_tensor *t)
{
	int64_t i, n = tfk_tensor_numel(t);

	for (i = 0; i < n; i++) {
		double v = urand() * 8 - 4;

		switch (t->dtype) {
		case TFK_DT_FLOAT: ((float *)t->data)[i] = (float)v; break;
		case TFK_DT_DOUBLE: ((double *)t->data)[i] = v; break;
		case TFK_DT_INT32:
			((int32_t *)t->data)[i] = (int32_t)(urand() * 4e9 - 2e9);
			break;
		default:
			((int64_t *)t->data)[i] = (int64_t)(rng ^ (rng << 3));
			break;
		}
	}
}

static void mk(struct tfk_tensor *t, enum tfk_dtype dt, int r,
	       const int64_t *s)
{
	if (tfk_tensor_init(t, dt, r, s, NULL))
		abort();
	fill(t);
}

static void broadcasting(void)
{
	/* (a shape, b shape) pairs, rank in [0], dims after */
	static const int64_t cases[][2][5] = {
		{ { 2, 3, 4 }, { 2, 3, 4 } },		/* same */
		{ { 2, 3, 4 }, { 0 } },			/* scalar b */
		{ { 0 }, { 2, 5, 7 } },			/* scalar a */
		{ { 2, 32, 10 }, { 1, 10 } },		/* bias row */
		{ { 2, 32, 1 }, { 1, 10 } },		/* column x row */
		{ { 2, 32, 1 }, { 2, 1, 10 } },		/* outer product */
		{ { 3, 2, 1, 5 }, { 2, 4, 1 } },	/* both broadcast */
		{ { 4, 3, 1, 4, 1 }, { 3, 2, 1, 5 } },
		{ { 1, 7 }, { 2, 7, 1 } },		/* rank 1 vs 2 */
		{ { 2, 1, 1 }, { 1, 6 } },
		{ { 2, 0, 3 }, { 1, 3 } },		/* empty */
	};
	static const enum tfk_dtype dts[] = { TFK_DT_FLOAT, TFK_DT_DOUBLE,
					      TFK_DT_INT32, TFK_DT_INT64 };
	struct tfk_err err = { 0, "" };
	size_t c, d;
	int op, bad = 0, n = 0;

	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
		for (d = 0; d < 4; d++)
			for (op = TFK_BIN_ADD; op <= TFK_BIN_RSQRT_GRAD; op++) {
				struct tfk_tensor a, b, o1, o2;
				int64_t os[TFK_MAX_RANK];
				int r;

				if ((op == TFK_BIN_DIV || op >= TFK_BIN_POW) &&
				    d >= 2)
					continue;
				mk(&a, dts[d], (int)cases[c][0][0],
				   cases[c][0] + 1);
				mk(&b, dts[d], (int)cases[c][1][0],
				   cases[c][1] + 1);
				tfk_shape_broadcast(a.rank, a.shape, b.rank,
						    b.shape, &r, os, NULL);
				tfk_tensor_init(&o1, dts[d], r, os, NULL);
				tfk_tensor_init(&o2, dts[d], r, os, NULL);
				if (tfk_cpu_binary_ref(op, &a, &b, &o1, &err) ||
				    tfk_cpu_binary(op, &a, &b, &o2, &err) ||
				    memcmp(o1.data, o2.data, o1.nbytes)) {
					if (bad++ < 5)
						tap_diag("case %zu dtype %d op "
							 "%d differs", c,
							 (int)dts[d], op);
				}
				n++;
				tfk_tensor_release(&a);
				tfk_tensor_release(&b);
				tfk_tensor_release(&o1);
				tfk_tensor_release(&o2);
			}
	is_int(bad, 0, "fast binary == _ref bit for bit in %d cases", n);
}

static void binary_values(void)
{
	struct tfk_tensor a, b, o;
	struct tfk_err err = { 0, "" };
	int64_t s2[1] = { 2 }, s23[2] = { 2, 3 }, s3[1] = { 3 }, s4[1] = { 4 };
	float av[2] = { 1, 10 }, bv[3] = { 1, 2, 3 }, zero = 0;
	float want[6] = { 2, 3, 4, 11, 12, 13 };
	int64_t r1[2] = { 2, 1 };

	tfk_tensor_init_view(&a, TFK_DT_FLOAT, 2, r1, av, 8, TFK_OWN_BORROWED,
			     NULL);
	tfk_tensor_init_view(&b, TFK_DT_FLOAT, 1, s3, bv, 12, TFK_OWN_BORROWED,
			     NULL);
	tfk_tensor_init(&o, TFK_DT_FLOAT, 2, s23, NULL);
	ok(!tfk_cpu_binary(TFK_BIN_ADD, &a, &b, &o, &err), "[2,1] + [3]");
	is_mem(o.data, 24, want, 24, "outer sum");
	tfk_tensor_release(&o);

	{
		float x[4] = { NAN, 1, -0.5f, 2 }, y[4] = { 1, NAN, -1, 3 };
		float mx[4], mn[4];

		tfk_tensor_init_view(&a, TFK_DT_FLOAT, 1, s4, x, 16,
				     TFK_OWN_BORROWED, NULL);
		tfk_tensor_init_view(&b, TFK_DT_FLOAT, 1, s4, y, 16,
				     TFK_OWN_BORROWED, NULL);
		tfk_tensor_init_view(&o, TFK_DT_FLOAT, 1, s4, mx, 16,
				     TFK_OWN_BORROWED, NULL);
		tfk_cpu_binary(TFK_BIN_MAX, &a, &b, &o, &err);
		ok(isnan(mx[0]) && isnan(mx[1]) && mx[2] == -0.5f &&
		   mx[3] == 3, "Maximum propagates NaN from either side");
		tfk_tensor_init_view(&o, TFK_DT_FLOAT, 1, s4, mn, 16,
				     TFK_OWN_BORROWED, NULL);
		tfk_cpu_binary(TFK_BIN_MIN, &a, &b, &o, &err);
		ok(isnan(mn[0]) && isnan(mn[1]) && mn[2] == -1 && mn[3] == 2,
		   "Minimum likewise");
		x[0] = 1;
		y[0] = zero;
		tfk_cpu_binary(TFK_BIN_DIV, &a, &b, &o, &err);
		ok(isinf(mn[0]) && mn[0] > 0, "1 / 0 = inf (IEEE)");
	}
	{
		int32_t x[2] = { INT32_MAX, INT32_MIN }, y[2] = { 1, 1 }, z[2];

		tfk_tensor_init_view(&a, TFK_DT_INT32, 1, s2, x, 8,
				     TFK_OWN_BORROWED, NULL);
		tfk_tensor_init_view(&b, TFK_DT_INT32, 1, s2, y, 8,
				     TFK_OWN_BORROWED, NULL);
		tfk_tensor_init_view(&o, TFK_DT_INT32, 1, s2, z, 8,
				     TFK_OWN_BORROWED, NULL);
		tfk_cpu_binary(TFK_BIN_ADD, &a, &b, &o, &err);
		ok(z[0] == INT32_MIN, "int32 max + 1 wraps");
		tfk_cpu_binary_ref(TFK_BIN_SUB, &a, &b, &o, &err);
		ok(z[1] == INT32_MAX, "int32 min - 1 wraps (_ref)");
		is_int(tfk_cpu_binary(TFK_BIN_DIV, &a, &b, &o, &err),
		       TFK_EINVAL, "integer RealDiv refused");
	}
	tfk_tensor_init(&a, TFK_DT_FLOAT, 1, s3, NULL);
	tfk_tensor_init(&b, TFK_DT_FLOAT, 1, s2, NULL);
	tfk_tensor_init(&o, TFK_DT_FLOAT, 1, s3, NULL);
	is_int(tfk_cpu_binary(TFK_BIN_ADD, &a, &b, &o, &err), TFK_EINVAL,
	       "[3] + [2] refused");
	is_str(err.msg, "shapes [3] and [2] do not broadcast (dim 0: 3 vs 2)",
	       "message");
	tfk_tensor_release(&a);
	tfk_tensor_release(&b);
	tfk_tensor_release(&o);
	{
		int64_t u[2] = { -1, 3 }, v[2] = { 4, 1 }, w[3] = { 2, 1, -1 };
		int64_t out[3];
		int r;

		ok(!tfk_shape_broadcast(2, u, 2, v, &r, out, NULL) &&
		   r == 2 && out[0] == 4 && out[1] == 3, "[?,3] x [4,1] = [4,3]");
		ok(!tfk_shape_broadcast(2, u, 3, w, &r, out, NULL) &&
		   r == 3 && out[0] == 2 && out[1] == -1 && out[2] == 3,
		   "[?,3] x [2,1,?] = [2,?,3]");
	}
}

static void unary(void)
{
	static const enum tfk_unop ops[] = { TFK_UN_RELU, TFK_UN_SIGMOID,
		TFK_UN_TANH, TFK_UN_NEG, TFK_UN_ABS, TFK_UN_SQUARE,
		TFK_UN_SQRT, TFK_UN_RSQRT, TFK_UN_EXP, TFK_UN_LOG,
		TFK_UN_LOG1P, TFK_UN_SIGN, TFK_UN_FLOOR };
	/* the same operation in float as in double, rounded once */
	static const int exact[] = { 1, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1 };
	int64_t s[2] = { 7, 33 };
	struct tfk_tensor x, o1, o2;
	struct tfk_err err = { 0, "" };
	double worst = 0;
	int i, bad = 0;
	int64_t j;

	mk(&x, TFK_DT_FLOAT, 2, s);
	((float *)x.data)[0] = NAN;
	((float *)x.data)[1] = -100;
	((float *)x.data)[2] = 100;
	tfk_tensor_init(&o1, TFK_DT_FLOAT, 2, s, NULL);
	tfk_tensor_init(&o2, TFK_DT_FLOAT, 2, s, NULL);
	for (i = 0; i < 13; i++) {
		tfk_cpu_unary_ref(ops[i], &x, &o1, &err);
		tfk_cpu_unary(ops[i], &x, &o2, &err);
		for (j = 0; j < 7 * 33; j++) {
			float a = ((float *)o1.data)[j], b = ((float *)o2.data)[j];
			double e;

			if (isnan(a) || isnan(b)) {
				bad += isnan(a) != isnan(b);
				continue;
			}
			e = fabs(a - b) / fmax(fabs(a), 1e-30);
			if (a == b)
				e = 0;
			if (e > worst)
				worst = e;
			if (exact[i] && a != b)
				bad++;
		}
	}
	is_int(bad, 0, "Relu, Neg, Abs, Square, Sqrt, Sign, Floor exact, NaN "
	       "where the _ref has NaN");
	ok(worst <= 1e-6, "Sigmoid, Tanh, Rsqrt, Exp, Log, Log1p fast vs "
	   "_ref: max rel err %.3g <= 1e-6", worst);
	tfk_cpu_unary_ref(TFK_UN_SIGMOID, &x, &o1, &err);
	ok(((float *)o1.data)[1] >= 0 && ((float *)o1.data)[1] < 1e-40 &&
	   ((float *)o1.data)[2] == 1, "sigmoid(-100) ~ 0, sigmoid(100) = 1");
	tfk_cpu_unary_ref(TFK_UN_RELU, &x, &o1, &err);
	ok(isnan(((float *)o1.data)[0]) && ((float *)o1.data)[1] == 0 &&
	   ((float *)o1.data)[2] == 100, "relu(NaN) NaN, relu(-100) 0");
	{
		struct tfk_tensor dy, rg;

		mk(&dy, TFK_DT_FLOAT, 2, s);
		tfk_tensor_init(&rg, TFK_DT_FLOAT, 2, s, NULL);
		tfk_cpu_relu_grad_ref(&dy, &x, &rg, &err);
		bad = 0;
		for (j = 0; j < 7 * 33; j++)
			bad += ((float *)rg.data)[j] !=
				(((float *)x.data)[j] > 0 ?
				 ((float *)dy.data)[j] : 0);
		is_int(bad, 0, "ReluGrad: dy where x > 0, else 0 (NaN: 0)");
		tfk_tensor_release(&dy);
		tfk_tensor_release(&rg);
	}
	tfk_tensor_release(&x);
	tfk_tensor_release(&o1);
	tfk_tensor_release(&o2);
}

static void cast(void)
{
	float f[8] = { 1.9f, -1.9f, 300, -300, NAN, 0, 1e20f, -0.5f };
	int64_t s[1] = { 8 };
	uint8_t u8[8], b[8];
	int8_t i8[8];
	int32_t i32[8];
	int64_t i64[8];
	struct tfk_tensor x, o;
	struct tfk_err err = { 0, "" };

	tfk_tensor_init_view(&x, TFK_DT_FLOAT, 1, s, f, 32, TFK_OWN_BORROWED,
			     NULL);
	tfk_tensor_init_view(&o, TFK_DT_UINT8, 1, s, u8, 8, TFK_OWN_BORROWED,
			     NULL);
	ok(!tfk_cpu_cast_ref(&x, &o, &err), "float -> uint8");
	ok(u8[0] == 1 && u8[1] == 0 && u8[2] == 255 && u8[3] == 0 &&
	   u8[4] == 0 && u8[6] == 255 && u8[7] == 0, "truncates, saturates, "
	   "NaN 0: %d %d %d %d %d %d", u8[0], u8[1], u8[2], u8[3], u8[4], u8[6]);
	tfk_tensor_init_view(&o, TFK_DT_INT8, 1, s, i8, 8, TFK_OWN_BORROWED,
			     NULL);
	tfk_cpu_cast_ref(&x, &o, &err);
	ok(i8[0] == 1 && i8[1] == -1 && i8[2] == 127 && i8[3] == -128,
	   "float -> int8 toward zero, saturating");
	tfk_tensor_init_view(&o, TFK_DT_INT32, 1, s, i32, 32,
			     TFK_OWN_BORROWED, NULL);
	tfk_cpu_cast_ref(&x, &o, &err);
	ok(i32[6] == INT32_MAX && i32[2] == 300 && i32[3] == -300,
	   "float -> int32");
	tfk_tensor_init_view(&o, TFK_DT_INT64, 1, s, i64, 64,
			     TFK_OWN_BORROWED, NULL);
	f[6] = 1e30f;
	tfk_cpu_cast_ref(&x, &o, &err);
	ok(i64[6] == INT64_MAX && i64[1] == -1, "float -> int64 saturates");
	tfk_tensor_init_view(&o, TFK_DT_BOOL, 1, s, b, 8, TFK_OWN_BORROWED,
			     NULL);
	tfk_cpu_cast_ref(&x, &o, &err);
	ok(b[0] == 1 && b[5] == 0 && b[7] == 1 && b[4] == 1,
	   "float -> bool: != 0 (NaN is true)");
	/* uint8 -> float, int32 -> int8 wraps */
	{
		uint8_t px[8] = { 0, 1, 127, 128, 200, 254, 255, 3 };
		float pf[8];
		int32_t w[8] = { 255, 256, -129, 1, 0, 0, 0, 0 };

		tfk_tensor_init_view(&x, TFK_DT_UINT8, 1, s, px, 8,
				     TFK_OWN_BORROWED, NULL);
		tfk_tensor_init_view(&o, TFK_DT_FLOAT, 1, s, pf, 32,
				     TFK_OWN_BORROWED, NULL);
		tfk_cpu_cast_ref(&x, &o, &err);
		ok(pf[4] == 200 && pf[6] == 255, "uint8 -> float");
		tfk_tensor_init_view(&x, TFK_DT_INT32, 1, s, w, 32,
				     TFK_OWN_BORROWED, NULL);
		tfk_tensor_init_view(&o, TFK_DT_INT8, 1, s, i8, 8,
				     TFK_OWN_BORROWED, NULL);
		tfk_cpu_cast_ref(&x, &o, &err);
		ok(i8[0] == -1 && i8[1] == 0 && i8[2] == 127,
		   "int32 -> int8 wraps as C++ static_cast");
	}
	tfk_tensor_init(&x, TFK_DT_STRING, 1, s, NULL);
	is_int(tfk_cpu_cast_ref(&x, &o, &err), TFK_EINVAL, "string refused");
	is_str(err.msg, "cannot cast string to int8", "message");
	tfk_tensor_release(&x);
}

static void softmax_sum_bias(void)
{
	double x[6] = { 1, 2, 3, 1000, 1000, 1000 }, o[6], e;
	double bsum[3], w0;
	int64_t s[2] = { 2, 3 }, s3[1] = { 3 }, k1[2] = { 1, 3 };
	struct tfk_tensor tx, to, tb;
	struct tfk_err err = { 0, "" };

	tfk_tensor_init_view(&tx, TFK_DT_DOUBLE, 2, s, x, 48, TFK_OWN_BORROWED,
			     NULL);
	tfk_tensor_init_view(&to, TFK_DT_DOUBLE, 2, s, o, 48, TFK_OWN_BORROWED,
			     NULL);
	ok(!tfk_cpu_softmax_ref(&tx, &to, &err), "softmax");
	e = exp(1) + exp(2) + exp(3);
	w0 = exp(1) / e;
	ok(fabs(o[0] - w0) < 1e-15 && fabs(o[2] - exp(3) / e) < 1e-15,
	   "softmax([1,2,3]) = e^x / sum");
	ok(fabs(o[3] - 1.0 / 3) < 1e-15 && fabs(o[5] - 1.0 / 3) < 1e-15,
	   "softmax of large equal logits: 1/3 each, no overflow");

	tfk_tensor_init_view(&to, TFK_DT_DOUBLE, 2, k1, bsum, 24,
			     TFK_OWN_BORROWED, NULL);
	ok(!tfk_cpu_sum_ref(&tx, 1, &to, &err), "sum over axis 0");
	ok(bsum[0] == 1001 && bsum[1] == 1002 && bsum[2] == 1003, "values");
	is_int(tfk_cpu_sum_ref(&tx, 2, &to, &err), TFK_EINVAL,
	       "wrong output shape refused");
	is_str(err.msg, "sum: output dim 1 is 3, want 1", "message");

	tfk_tensor_init_view(&tb, TFK_DT_DOUBLE, 1, s3, bsum, 24,
			     TFK_OWN_BORROWED, NULL);
	tfk_tensor_init_view(&to, TFK_DT_DOUBLE, 2, s, o, 48, TFK_OWN_BORROWED,
			     NULL);
	ok(!tfk_cpu_bias_add_ref(&tx, &tb, &to, &err), "bias add");
	ok(o[0] == 1002 && o[5] == 2003, "bias added per channel");
	s3[0] = 2;
	tfk_tensor_init_view(&tb, TFK_DT_DOUBLE, 1, s3, bsum, 16,
			     TFK_OWN_BORROWED, NULL);
	is_int(tfk_cpu_bias_add_ref(&tx, &tb, &to, &err), TFK_EINVAL,
	       "bias of 2 for 3 channels refused");
}

static void gemm(void)
{
	static const int64_t sizes[][3] = {
		{ 1, 1, 1 }, { 2, 3, 4 }, { 7, 5, 3 }, { 32, 128, 100 },
		{ 64, 10, 128 }, { 17, 33, 65 }, { 3, 4, 0 }, { 100, 1, 300 },
		{ 1, 128, 784 }, { 1, 10, 3 },	/* one row: the gemv path */
		{ 1, 10, 4608 }, { 3, 21, 2500 },	/* masked tail, long k */
	};
	double worst = 0, dworst = 0;
	size_t c;
	int ta, tb, bad = 0;

	for (c = 0; c < sizeof(sizes) / sizeof(sizes[0]); c++)
		for (ta = 0; ta < 2; ta++)
			for (tb = 0; tb < 2; tb++) {
				int64_t m = sizes[c][0], n = sizes[c][1];
				int64_t k = sizes[c][2], i, j, l;
				float *a = malloc((m * k + 1) * 4);
				float *b = malloc((k * n + 1) * 4);
				float *c1 = malloc(m * n * 4);
				float *c2 = malloc(m * n * 4);
				double *da = malloc((m * k + 1) * 8);
				double *db = malloc((k * n + 1) * 8);
				double *d1 = malloc(m * n * 8);
				double *d2 = malloc(m * n * 8);

				for (i = 0; i < m * k; i++)
					da[i] = a[i] = (float)(urand() * 2 - 1);
				for (i = 0; i < k * n; i++)
					db[i] = b[i] = (float)(urand() * 2 - 1);
				for (i = 0; i < m * n; i++)
					c2[i] = d2[i] = NAN;	/* overwritten */
				tfk_cpu_sgemm_ref(ta, tb, m, n, k, a, b, c1);
				tfk_cpu_sgemm(ta, tb, m, n, k, a, b, c2);
				tfk_cpu_dgemm_ref(ta, tb, m, n, k, da, db, d1);
				tfk_cpu_dgemm(ta, tb, m, n, k, da, db, d2);
				for (i = 0; i < m; i++)
					for (j = 0; j < n; j++) {
						double s = 0, e;

						for (l = 0; l < k; l++)
							s += fabs(
							(ta ? a[l * m + i] :
							 a[i * k + l]) *
							(tb ? b[j * k + l] :
							 b[l * n + j]));
						e = fabs(c1[i * n + j] -
							 c2[i * n + j]);
						if (!(e <= 1e-5 * s + 1e-30))
							bad++;
						if (s && e / s > worst)
							worst = e / s;
						e = fabs(d1[i * n + j] -
							 d2[i * n + j]);
						if (!(e <= 1e-13 * s + 1e-300))
							bad++;
						if (s && e / s > dworst)
							dworst = e / s;
					}
				free(a), free(b), free(c1), free(c2);
				free(da), free(db), free(d1), free(d2);
			}
	is_int(bad, 0, "sgemm/dgemm (own kernel, OpenBLAS) vs triple loop, all transposes");
	/* the products above went to a BLAS library, not the fallback */
	ok(tfk_cpu_blas_name() && strstr(tfk_cpu_blas_name(), "openblas"),
	   "OpenBLAS was loaded on first use (%s)",
	   tfk_cpu_blas_name() ? tfk_cpu_blas_name() : "none");
	tap_diag("max error / sum|ab|: float %.3g, double %.3g", worst,
		 dworst);
	{
		/* hand-checked: [[1,2],[3,4]] x [[5,6],[7,8]] */
		float a[4] = { 1, 2, 3, 4 }, b[4] = { 5, 6, 7, 8 }, c2[4];
		float want[4] = { 19, 22, 43, 50 }, wantt[4] = { 26, 30, 38, 44 };

		tfk_cpu_sgemm_ref(0, 0, 2, 2, 2, a, b, c2);
		is_mem(c2, 16, want, 16, "2x2 _ref by hand");
		tfk_cpu_sgemm(1, 0, 2, 2, 2, a, b, c2);
		is_mem(c2, 16, wantt, 16, "A^T B by hand");
	}
}

/* ReluGrad, BiasAdd exact; Softmax in float vs the _ref in double */
static void fast_nn(void)
{
	int64_t s[2] = { 33, 10 }, sb[1] = { 10 }, j, n = 330;
	struct tfk_tensor x, dy, b, o1, o2;
	struct tfk_err err = { 0, "" };
	double worst = 0;

	mk(&x, TFK_DT_FLOAT, 2, s);
	mk(&dy, TFK_DT_FLOAT, 2, s);
	mk(&b, TFK_DT_FLOAT, 1, sb);
	((float *)x.data)[3] = 0;
	tfk_tensor_init(&o1, TFK_DT_FLOAT, 2, s, NULL);
	tfk_tensor_init(&o2, TFK_DT_FLOAT, 2, s, NULL);
	tfk_cpu_relu_grad_ref(&dy, &x, &o1, &err);
	tfk_cpu_relu_grad(&dy, &x, &o2, &err);
	is_mem(o2.data, o2.nbytes, o1.data, o1.nbytes, "fast ReluGrad == "
	       "_ref");
	tfk_cpu_bias_add_ref(&x, &b, &o1, &err);
	tfk_cpu_bias_add(&x, &b, &o2, &err);
	is_mem(o2.data, o2.nbytes, o1.data, o1.nbytes, "fast BiasAdd == "
	       "_ref");
	((float *)x.data)[0] = 80;	/* exp would overflow unshifted */
	tfk_cpu_softmax_ref(&x, &o1, &err);
	tfk_cpu_softmax(&x, &o2, &err);
	for (j = 0; j < n; j++) {
		double e = fabs(((float *)o1.data)[j] - ((float *)o2.data)[j]);

		worst = e > worst ? e : worst;
	}
	ok(worst <= 1e-6, "fast Softmax vs _ref: max abs err %.2g <= 1e-6",
	   worst);
	tfk_tensor_release(&x);
	tfk_tensor_release(&dy);
	tfk_tensor_release(&b);
	tfk_tensor_release(&o1);
	tfk_tensor_release(&o2);
}

/* numpy oracle for the unary, binary and comparison ops (gradcheck.h) */
#define NP_UN(nm, ex, l, h) { .name = nm, .op = nm, .expr = ex, .rx = 2, \
	.sx = { 5, 7 }, .ry = -1, .lo = l, .hi = h }
#define NP_BIN(nm, tag, ex, r2, d0, d1, l, h) { .name = nm tag, .op = nm, \
	.expr = ex, .rx = 3, .sx = { 2, 5, 7 }, .ry = r2, \
	.sy = { d0, d1, 7 }, .lo = l, .hi = h }

static const struct np_case np_cases[] = {
	NP_UN("Neg", "-X", -3, 3),
	NP_UN("Abs", "np.abs(X)", -3, 3),
	NP_UN("Square", "np.square(X)", -3, 3),
	NP_UN("Sqrt", "np.sqrt(X)", 0, 9),
	NP_UN("Rsqrt", "1 / np.sqrt(X)", 0.01, 9),
	NP_UN("Exp", "np.exp(X)", -10, 10),
	NP_UN("Log", "np.log(X)", 0.001, 100),
	NP_UN("Log1p", "np.log1p(X)", -0.9, 10),
	NP_UN("Sign", "np.sign(X)", -3, 3),
	NP_UN("Floor", "np.floor(X)", -3, 3),
	NP_UN("Sigmoid", "1 / (1 + np.exp(-X))", -10, 10),
	NP_UN("Tanh", "np.tanh(X)", -5, 5),
	NP_UN("Relu", "np.maximum(X, 0)", -3, 3),
	NP_BIN("Pow", "_same", "np.power(X, Y)", 3, 2, 5, 0.1, 3),
	NP_BIN("Pow", "_row", "np.power(X, Y)", 1, 7, 0, 0.1, 3),
	NP_BIN("SquaredDifference", "_same", "(X - Y) ** 2", 3, 2, 5, -3, 3),
	NP_BIN("SquaredDifference", "_col", "(X - Y) ** 2", 2, 5, 1, -3, 3),
	NP_BIN("RealDiv", "_row", "X / Y", 1, 7, 0, 0.5, 3),
	NP_BIN("Sub", "_col", "X - Y", 2, 5, 1, -3, 3),
	NP_BIN("Maximum", "_row", "np.maximum(X, Y)", 1, 7, 0, -3, 3),
	NP_BIN("Minimum", "_col", "np.minimum(X, Y)", 2, 5, 1, -3, 3),
	NP_BIN("Greater", "_row", "X > Y", 1, 7, 0, -3, 3),
	NP_BIN("GreaterEqual", "_col", "X >= Y", 2, 5, 1, -3, 3),
	NP_BIN("Less", "_same", "X < Y", 3, 2, 5, -3, 3),
	NP_BIN("LessEqual", "_row", "X <= Y", 1, 7, 0, -3, 3),
	NP_BIN("Equal", "_scalar", "X == Y", 0, 0, 0, 1, 1),
	NP_BIN("NotEqual", "_row", "X != Y", 1, 7, 0, -3, 3),
	{ .name = "SigmoidGrad", .op = "SigmoidGrad",
	  .expr = "Y * X * (1 - X)", .rx = 2, .sx = { 5, 7 }, .ry = 2,
	  .sy = { 5, 7 }, .lo = 0, .hi = 1 },
	{ .name = "TanhGrad", .op = "TanhGrad", .expr = "Y * (1 - X * X)",
	  .rx = 2, .sx = { 5, 7 }, .ry = 2, .sy = { 5, 7 }, .lo = -1, .hi = 1 },
	{ .name = "SqrtGrad", .op = "SqrtGrad", .expr = "Y * 0.5 / X",
	  .rx = 2, .sx = { 5, 7 }, .ry = 2, .sy = { 5, 7 }, .lo = 0.5,
	  .hi = 2 },
	{ .name = "RsqrtGrad", .op = "RsqrtGrad",
	  .expr = "Y * -0.5 * X ** 3", .rx = 2, .sx = { 5, 7 }, .ry = 2,
	  .sy = { 5, 7 }, .lo = 0.5, .hi = 2 },
	{ .name = "Softmax", .op = "Softmax",
	  .expr = "np.exp(X - X.max(-1, keepdims=True)) / "
		  "np.exp(X - X.max(-1, keepdims=True)).sum(-1, keepdims=True)",
	  .rx = 2, .sx = { 5, 7 }, .ry = -1, .lo = -5, .hi = 5 },
};

static void vs_numpy(void)
{
	np_check(np_cases, (int)(sizeof(np_cases) / sizeof(np_cases[0])));
}

static void logic_select(void)
{
	struct tfk_err err = { 0, "" };
	int64_t s4[1] = { 4 }, s1[1] = { 1 };
	uint8_t a[4] = { 0, 1, 0, 1 }, b[4] = { 0, 0, 1, 1 }, o[4];
	uint8_t want_and[4] = { 0, 0, 0, 1 }, one = 1;
	float t[4] = { 1, 2, 3, 4 }, e[1] = { -1 }, so[4];
	float want_sel[4] = { -1, 2, -1, 4 };
	struct tfk_tensor ta, tb, to, tt, te, tso;

	tfk_tensor_init_view(&ta, TFK_DT_BOOL, 1, s4, a, 4, TFK_OWN_BORROWED,
			     NULL);
	tfk_tensor_init_view(&tb, TFK_DT_BOOL, 1, s4, b, 4, TFK_OWN_BORROWED,
			     NULL);
	tfk_tensor_init_view(&to, TFK_DT_BOOL, 1, s4, o, 4, TFK_OWN_BORROWED,
			     NULL);
	ok(!tfk_cpu_compare(TFK_CMP_AND, &ta, &tb, &to, &err) &&
	   !memcmp(o, want_and, 4), "LogicalAnd truth table");
	tfk_tensor_init_view(&tb, TFK_DT_BOOL, 1, s1, &one, 1,
			     TFK_OWN_BORROWED, NULL);
	ok(!tfk_cpu_compare_ref(TFK_CMP_EQUAL, &ta, &tb, &to, &err) &&
	   !memcmp(o, a, 4), "Equal of bools, broadcast scalar");
	tfk_tensor_init_view(&tt, TFK_DT_FLOAT, 1, s4, t, 16,
			     TFK_OWN_BORROWED, NULL);
	tfk_tensor_init_view(&te, TFK_DT_FLOAT, 1, s1, e, 4,
			     TFK_OWN_BORROWED, NULL);
	tfk_tensor_init_view(&tso, TFK_DT_FLOAT, 1, s4, so, 16,
			     TFK_OWN_BORROWED, NULL);
	ok(!tfk_cpu_select(&ta, &tt, &te, &tso, &err) &&
	   !memcmp(so, want_sel, 16), "SelectV2 with a broadcast else");
	memset(so, 0, 16);
	ok(!tfk_cpu_select_ref(&ta, &tt, &te, &tso, &err) &&
	   !memcmp(so, want_sel, 16), "SelectV2 _ref likewise");
	is_int(tfk_cpu_compare(TFK_CMP_AND, &tt, &tt, &to, &err), TFK_EINVAL,
	       "LogicalAnd of floats refused");
	is_str(err.msg, "comparison of float32 and float32 into bool",
	       "message");
}


/* Gradients by finite differences (gradcheck.h) --------------------------- */

static int build_select(struct tfk_graph *g, const struct tfk_port *x,
			struct tfk_port *y, struct tfk_err *err, void *ctx)
{
	struct tfk_tensor t;
	struct tfk_port in[3], zero;
	double z = 0;

	tfk_tensor_init_view(&t, TFK_DT_DOUBLE, 0, NULL, &z, 8,
			     TFK_OWN_BORROWED, NULL);
	in[0] = x[0];
	if (tfk_graph_const(g, NULL, &t, &zero, err))
		return -1;
	in[1] = zero;
	if (tfk_graph_add_node(g, "Greater", NULL, in, 2, NULL, 0, &in[0],
			       err))
		return -1;
	in[1] = x[1];
	in[2] = x[2];
	return tfk_graph_add_node(g, "SelectV2", NULL, in, 3, NULL, 0, y, err);
}

/* 2-input op over x0 [b?, 3, 4] and x1 of shape s1 (rank r1). */
static void grad2(const char *op, int r1, const int64_t *s1b,
		  const int64_t *s1, double lo, double hi)
{
	struct gc_input in[2] = {
		{ 3, { -1, 3, 4 }, { 2, 3, 4 }, lo, hi, 0 },
		{ r1, { 0 }, { 0 }, lo, hi, 0 },
	};
	struct gc_op o = { .op = op, .n_x = 2 };
	char name[96];

	memcpy(in[1].build, s1b, r1 * sizeof(int64_t));
	memcpy(in[1].run, s1, r1 * sizeof(int64_t));
	snprintf(name, sizeof(name), "%s [?,3,4] with rank-%d operand", op,
		 r1);
	gradcheck(name, in, 2, gc_build_op, &o);
}

static void grad1(const char *op, double lo, double hi)
{
	struct gc_input in[1] = { { 2, { -1, 5 }, { 3, 5 }, lo, hi, 0 } };
	struct gc_op o = { .op = op, .n_x = 1 };

	gradcheck(op, in, 1, gc_build_op, &o);
}

static void gradients(void)
{
	static const char *const bin[] = { "AddV2", "Sub", "Mul", "RealDiv",
		"Maximum", "Minimum", "SquaredDifference" };
	static const char *const un[] = { "Neg", "Square", "Exp", "Sigmoid",
		"Tanh", "Softmax", "Relu", "Abs", "Identity" };
	static const char *const pos[] = { "Log", "Sqrt", "Rsqrt", "Log1p" };
	int64_t same[3] = { -1, 3, 4 }, same_r[3] = { 2, 3, 4 };
	int64_t row[1] = { 4 }, col[3] = { 1, 3, 1 }, sc[1] = { 0 };
	int64_t amb[2] = { -1, 4 }, amb_r[2] = { 1, 4 };
	size_t i;

	for (i = 0; i < sizeof(bin) / sizeof(bin[0]); i++) {
		double lo = !strcmp(bin[i], "RealDiv") ? 0.5 : 0;
		double hi = lo ? 2 : 0;

		grad2(bin[i], 3, same, same_r, lo, hi);
		grad2(bin[i], 1, row, row, lo, hi);	/* bias-like */
		grad2(bin[i], 3, col, col, lo, hi);	/* size-1 dims */
		grad2(bin[i], 0, sc, sc, lo, hi);	/* scalar */
	}
	/* [?, 4] against [?, 3, 4] whose ? is 1 at run time: BroadcastGradientArgs */
	grad2("AddV2", 2, amb, amb_r, 0, 0);
	grad2("Mul", 2, amb, amb_r, 0, 0);
	grad2("Pow", 3, same, same_r, 0.5, 2);
	grad2("Pow", 1, row, row, 0.5, 2);
	for (i = 0; i < sizeof(un) / sizeof(un[0]); i++)
		grad1(un[i], 0, 0);
	for (i = 0; i < sizeof(pos) / sizeof(pos[0]); i++)
		grad1(pos[i], 0.5, 3);
	{
		/* Cast float64 -> float32 -> float64 round trip: the float32
		 * step rounds, so the check is on a float64 -> float64 Cast */
		struct gc_op o = { .op = "Cast", .n_x = 1, .n_attrs = 1,
				   .attrs = { TFK_A_TYPE("DstT",
							 TFK_DT_DOUBLE) } };
		struct gc_input in[1] = { { 2, { -1, 5 }, { 3, 5 }, 0, 0, 0 } };

		gradcheck("Cast", in, 1, gc_build_op, &o);
	}
	{
		/* Reshape [?, 3, 4] -> [?, 12] (Const shape with -1) */
		struct gc_op o = { .op = "Reshape", .n_x = 1, .n_consts = 1,
				   .const_len = { 2 },
				   .consts = { { -1, 12 } } };
		struct gc_input in[1] = { { 3, { -1, 3, 4 }, { 2, 3, 4 }, 0, 0,
					    0 } };

		gradcheck("Reshape", in, 1, gc_build_op, &o);
	}
	{
		/* SelectV2(cond, t, e) with a broadcast e */
		struct gc_input in[3] = {
			{ 2, { -1, 4 }, { 3, 4 }, 0, 0, 1 },
			{ 2, { -1, 4 }, { 3, 4 }, 0, 0, 0 },
			{ 1, { 4 }, { 4 }, 0, 0, 0 },
		};

		gradcheck("SelectV2 (cond = x0 > 0)", in, 3, build_select,
			  NULL);
	}
}

int main(void)
{
	broadcasting();
	binary_values();
	unary();
	cast();
	softmax_sum_bias();
	gemm();
	fast_nn();
	gradients();
	vs_numpy();
	logic_select();
	return tap_done();
}
