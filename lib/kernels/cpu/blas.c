/*
 * blas.c - OpenBLAS, loaded on the first product that needs it (see
 * cpu.h).
 *
 * Linking -lopenblas cost every tfk process about 5 ms before main (the
 * library is 30 MB with libgfortran behind it, and its constructor
 * sizes buffers and starts a thread per core), and those threads then
 * spun on sched_yield for about 0.1 s of CPU each: a tfk-map -j 1 used
 * 1.22 CPUs, a pipeline of four tools lost most of a core at every
 * start. Most tools never make a product large enough for OpenBLAS
 * (small ones take matmul.c's own kernel), so the library is opened
 * with dlopen when the first one comes, under a pthread_once.
 *
 * Which library: libopenblas.so.0 (Debian's alternatives link, the
 * package scripts/setup installs), else any libopenblas.so, else the
 * system libblas.so.3 with CBLAS symbols. openblas_set_num_threads is
 * used where the library has it; the count asked for before loading
 * (tfk_cpu_blas_threads) is applied at load. If no library loads, the
 * callers compute with the reference loops: right, only slow.
 *
 * Rejected: a constructor that stops OpenBLAS's threads after a normal
 * link (saves the spinning, not the 5 ms), and linking a serial
 * OpenBLAS (the large products of training want its threads).
 */
#include "kernels/cpu.h"

#include <cblas.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

typedef void sgemm_fn(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE,
		      enum CBLAS_TRANSPOSE, int, int, int, float,
		      const float *, int, const float *, int, float, float *,
		      int);
typedef void dgemm_fn(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE,
		      enum CBLAS_TRANSPOSE, int, int, int, double,
		      const double *, int, const double *, int, double,
		      double *, int);
typedef void sgemv_fn(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, int, int,
		      float, const float *, int, const float *, int, float,
		      float *, int);

static struct {
	pthread_once_t once;
	const char *name;	/* the library opened, NULL if none */
	sgemm_fn *sgemm;
	dgemm_fn *dgemm;
	sgemv_fn *sgemv;
	int (*get_threads)(void);
	void (*set_threads)(int);
	atomic_int want;	/* threads asked for; 0: the library's own */
	pthread_mutex_t mu;	/* a product that changes the count */
} B = { PTHREAD_ONCE_INIT, NULL, NULL, NULL, NULL, NULL, NULL, 0,
	PTHREAD_MUTEX_INITIALIZER };

static void blas_open(void)
{
	static const char *const names[] = {
		"libopenblas.so.0", "libopenblas.so", "libblas.so.3",
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);

		if (!h)
			continue;
		*(void **)&B.sgemm = dlsym(h, "cblas_sgemm");
		*(void **)&B.dgemm = dlsym(h, "cblas_dgemm");
		*(void **)&B.sgemv = dlsym(h, "cblas_sgemv");
		if (B.sgemm && B.dgemm && B.sgemv) {
			*(void **)&B.get_threads =
				dlsym(h, "openblas_get_num_threads");
			*(void **)&B.set_threads =
				dlsym(h, "openblas_set_num_threads");
			if (!B.get_threads || !B.set_threads)
				B.get_threads = NULL, B.set_threads = NULL;
			if (B.set_threads && atomic_load(&B.want) > 0)
				B.set_threads(atomic_load(&B.want));
			B.name = names[i];
			return;
		}
		dlclose(h);
	}
	B.sgemm = NULL, B.dgemm = NULL, B.sgemv = NULL;
}

static int blas_ready(void)
{
	pthread_once(&B.once, blas_open);
	return B.name != NULL;
}

void tfk_cpu_blas_threads(int n)
{
	atomic_store(&B.want, n > 0 ? n : 0);
	/* Loaded already: apply now. Not loaded: blas_open applies it. */
	if (B.name && B.set_threads && n > 0) {
		pthread_mutex_lock(&B.mu);
		B.set_threads(n);
		pthread_mutex_unlock(&B.mu);
	}
}

const char *tfk_cpu_blas_name(void)
{
	return blas_ready() ? B.name : NULL;
}

int tfk_blas_sgemm(int ta, int tb, int m, int n, int k, const float *a,
		   int lda, const float *b, int ldb, float *c, int ldc,
		   int split)
{
	int nt = 0;

	if (!blas_ready())
		return -1;
	/* one thread for this call: the count is global to OpenBLAS, so
	 * the change and the call are one critical section */
	if (!split && B.get_threads) {
		pthread_mutex_lock(&B.mu);
		nt = B.get_threads();
		if (nt > 1)
			B.set_threads(1);
		else
			pthread_mutex_unlock(&B.mu);
	}
	B.sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
		tb ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a, lda, b, ldb,
		0.0f, c, ldc);
	if (nt > 1) {
		B.set_threads(nt);
		pthread_mutex_unlock(&B.mu);
	}
	return 0;
}

int tfk_blas_sgemv(int trans, int rows, int cols, const float *a, int lda,
		   const float *x, float *y)
{
	if (!blas_ready())
		return -1;
	B.sgemv(CblasRowMajor, trans ? CblasTrans : CblasNoTrans, rows, cols,
		1.0f, a, lda, x, 1, 0.0f, y, 1);
	return 0;
}

int tfk_blas_dgemm(int ta, int tb, int m, int n, int k, const double *a,
		   int lda, const double *b, int ldb, double *c, int ldc)
{
	if (!blas_ready())
		return -1;
	B.dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
		tb ? CblasTrans : CblasNoTrans, m, n, k, 1.0, a, lda, b, ldb,
		0.0, c, ldc);
	return 0;
}
