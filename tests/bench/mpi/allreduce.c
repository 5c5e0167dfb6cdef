/*
 * allreduce.c - the peer of bench-gradsync: a bare MPI_Allreduce (sum,
 * in place) of MB MiB of float32, linked by mpicc as any MPI program.
 *
 *   mpirun -np N allreduce [--mb MB] [--iters I]
 *
 * Rank 0 prints the best of 3 passes of I calls (after one warm-up) as
 * MB per second of the summed bytes.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	double mb = 64, best = 0;
	int iters = 20, rank, i, p;
	size_t n;
	float *x;

	MPI_Init(&argc, &argv);
	for (i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--mb"))
			mb = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--iters"))
			iters = atoi(argv[i + 1]);
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	n = (size_t)(mb * (1 << 20) / 4);
	x = malloc(n * sizeof(float));
	for (size_t e = 0; e < n; e++)
		x[e] = 1.0f;
	for (p = 0; p < 4; p++) {
		double t0 = MPI_Wtime();

		for (i = 0; i < iters; i++)
			MPI_Allreduce(MPI_IN_PLACE, x, (int)n, MPI_FLOAT, MPI_SUM,
				      MPI_COMM_WORLD);
		t0 = MPI_Wtime() - t0;
		if (p && (!best || t0 < best))
			best = t0;
	}
	if (!rank)
		printf("%.1f\n", (double)n * sizeof(float) * iters / best / 1e6);
	free(x);
	MPI_Finalize();
	return 0;
}
