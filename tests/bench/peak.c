/*
 * peak.c - bench driver: the machine's calibrated FP32 peak, GFLOP/s.
 *
 *   peak [-t THREADS] [-s SECONDS] [-r ROUNDS]
 *
 * Each of THREADS threads (default: the online cores) runs fused
 * multiply-adds on ACC independent vector accumulators, so that no FMA
 * waits for the one before it (ACC covers FMA latency 4 x 2 FMA units
 * with room to spare), for about SECONDS (default 0.2), on the widest
 * vectors the CPU reports: AVX-512F (16 lanes), else AVX2 + FMA (8),
 * else scalar C (1 lane, no FMA: a floor, not a peak). An FMA counts as
 * 2 FLOPs per lane. ROUNDS (default 3) rounds are run and the best one
 * reported: on a shared machine the least disturbed round is the one
 * closest to what the cores can do. Prints one JSON line:
 *   {"gflops", "gflops_cpu", "threads", "isa", "lanes", "seconds"}
 * gflops is FLOPs over wall time; gflops_cpu sums each thread's FLOPs
 * over its own CPU time, what the cores do while they run: on a busy
 * machine, where threads wait for a core, it is the one near the peak.
 * bench-train-*.sh set it beside the nominal peak from /proc/cpuinfo
 * (tests/bench/peak.py).
 */
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ACC 12		/* independent accumulators per thread */
#define CHUNK 4096	/* iterations between clock reads */

struct worker {
	pthread_t tid;
	double secs;
	double flops;	/* done in about secs */
	double cpu;	/* the thread's CPU seconds for them */
	float sink;	/* keeps the result alive */
};

static int lanes = 1;
static const char *isa = "scalar";
static pthread_barrier_t start;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * acc = acc * a + b with a just under 1 converges to b / (1 - a): the
 * values stay normal floats however long it runs.
 */
__attribute__((target("avx512f")))
static long run_avx512(double secs, float *sink)
{
	__m512 acc[ACC], a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
	long it = 0;
	double t0 = now();
	int k, j;

	for (k = 0; k < ACC; k++)
		acc[k] = _mm512_set1_ps((float)k);
	do {
		for (j = 0; j < CHUNK; j++)
#pragma GCC unroll 16	/* keeps acc[] in registers */
			for (k = 0; k < ACC; k++)
				acc[k] = _mm512_fmadd_ps(acc[k], a, b);
		it += CHUNK;
	} while (now() - t0 < secs);
	for (k = 1; k < ACC; k++)
		acc[0] = _mm512_add_ps(acc[0], acc[k]);
	*sink = _mm512_reduce_add_ps(acc[0]);
	return it;
}

__attribute__((target("avx2,fma")))
static long run_avx2(double secs, float *sink)
{
	__m256 acc[ACC], a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
	float out[8];
	long it = 0;
	double t0 = now();
	int k, j;

	for (k = 0; k < ACC; k++)
		acc[k] = _mm256_set1_ps((float)k);
	do {
		for (j = 0; j < CHUNK; j++)
#pragma GCC unroll 16	/* keeps acc[] in registers */
			for (k = 0; k < ACC; k++)
				acc[k] = _mm256_fmadd_ps(acc[k], a, b);
		it += CHUNK;
	} while (now() - t0 < secs);
	for (k = 1; k < ACC; k++)
		acc[0] = _mm256_add_ps(acc[0], acc[k]);
	_mm256_storeu_ps(out, acc[0]);
	*sink = out[0];
	return it;
}

static long run_scalar(double secs, float *sink)
{
	float acc[ACC];
	long it = 0;
	double t0 = now();
	int k, j;

	for (k = 0; k < ACC; k++)
		acc[k] = (float)k;
	do {
		for (j = 0; j < CHUNK; j++)
#pragma GCC unroll 16	/* keeps acc[] in registers */
			for (k = 0; k < ACC; k++)
				acc[k] = acc[k] * 0.999999f + 1e-7f;
		it += CHUNK;
	} while (now() - t0 < secs);
	*sink = acc[0] + acc[ACC - 1];
	return it;
}

static double thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	long it;
	double c0;

	pthread_barrier_wait(&start);
	c0 = thread_cpu();
	if (lanes == 16)
		it = run_avx512(w->secs, &w->sink);
	else if (lanes == 8)
		it = run_avx2(w->secs, &w->sink);
	else
		it = run_scalar(w->secs, &w->sink);
	w->flops = (double)it * ACC * lanes * 2;
	w->cpu = thread_cpu() - c0;
	return NULL;
}

static void usage(void)
{
	fputs("usage: peak [-t THREADS] [-s SECONDS] [-r ROUNDS]\n", stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	long threads = sysconf(_SC_NPROCESSORS_ONLN);
	double secs = 0.2, best = 0, best_cpu = 0;
	int rounds = 3, opt, r, i;
	struct worker *w;

	while ((opt = getopt(argc, argv, "t:s:r:")) != -1) {
		if (opt == 't')
			threads = atol(optarg);
		else if (opt == 's')
			secs = atof(optarg);
		else if (opt == 'r')
			rounds = atoi(optarg);
		else
			usage();
	}
	if (optind != argc || threads < 1 || threads > 1024 || !(secs > 0) ||
	    rounds < 1)
		usage();
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f")) {
		lanes = 16;
		isa = "avx512f";
	} else if (__builtin_cpu_supports("avx2") &&
		   __builtin_cpu_supports("fma")) {
		lanes = 8;
		isa = "avx2+fma";
	}
	w = calloc((size_t)threads, sizeof(*w));
	if (!w || pthread_barrier_init(&start, NULL, (unsigned)threads + 1)) {
		fputs("peak: out of memory\n", stderr);
		return 1;
	}
	for (r = 0; r < rounds; r++) {
		double flops = 0, per_cpu = 0, t0, t;

		for (i = 0; i < threads; i++) {
			w[i].secs = secs;
			if (pthread_create(&w[i].tid, NULL, work, &w[i])) {
				fputs("peak: cannot start a thread\n", stderr);
				return 1;
			}
		}
		t0 = now();
		pthread_barrier_wait(&start);
		for (i = 0; i < threads; i++) {
			pthread_join(w[i].tid, NULL);
			flops += w[i].flops;
			if (w[i].cpu > 0)
				per_cpu += w[i].flops / w[i].cpu;
		}
		/* the slowest thread's end: all of them ran in this span */
		t = now() - t0;
		if (flops / t > best)
			best = flops / t;
		if (per_cpu > best_cpu)
			best_cpu = per_cpu;
	}
	printf("{\"gflops\":%.1f,\"gflops_cpu\":%.1f,\"threads\":%ld,"
	       "\"isa\":\"%s\",\"lanes\":%d,\"seconds\":%.3g}\n",
	       best / 1e9, best_cpu / 1e9, threads, isa, lanes, secs);
	free(w);
	return 0;
}
