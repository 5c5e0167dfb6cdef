/*
 * replica.c - broadcasting and comparing the training state.
 */
#include "nn/replica.h"

#include "util/alloc.h"
#include "util/mpi.h"

#include <inttypes.h>

static int numeric(const struct tfk_tensor *t, const char *name,
		   struct tfk_err *err)
{
	if (t->dtype != TFK_DT_STRING)
		return 0;
	return tfk_errf(err, TFK_EINVAL, "variable %s: a string variable "
			"cannot be replicated", name);
}

int tfk_replica_bcast(struct tfk_graph *g, struct tfk_optim *o,
		      struct tfk_trainer *tr, struct tfk_err *err)
{
	int n = tfk_graph_n_variables(g), rc = 0, i;
	int64_t head[2] = { tfk_optim_n_slots(o), tfk_optim_iterations(o) };

	for (i = 0; i < n && !rc; i++) {
		const char *name;
		struct tfk_tensor *t = tfk_graph_var_at(g, i, &name);

		rc = numeric(t, name, err);
		if (!rc)
			rc = tfk_mpi_bcast(t->data, t->nbytes, 0, err);
	}
	if (!rc)
		rc = tfk_mpi_bcast(head, sizeof(head), 0, err);
	if (rc)
		return rc;
	tfk_optim_set_iterations(o, head[1]);
	if (head[0] && !tfk_optim_n_slots(o)) {
		int k = tfk_trainer_n_opt(tr);
		const int *idx = tfk_trainer_opt_vars(tr);
		struct tfk_tensor **v = tfk_calloc((size_t)k + 1, sizeof(*v));

		if (!v)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		for (i = 0; i < k; i++)
			v[i] = tfk_graph_var_at(g, idx[i], NULL);
		rc = tfk_optim_init_slots(o, k, v, err);
		tfk_free(v);
		if (rc)
			return rc;
	}
	if (head[0] != tfk_optim_n_slots(o))
		return tfk_errf(err, TFK_EINVAL, "rank %d: %d optimizer slots, "
				"rank 0 %" PRId64, tfk_mpi_rank(),
				tfk_optim_n_slots(o), head[0]);
	for (i = 0; i < head[0] && !rc; i++) {
		int var;
		const char *name;
		struct tfk_tensor *t = tfk_optim_slot(o, i, &var, &name);

		rc = tfk_mpi_bcast(t->data, t->nbytes, 0, err);
	}
	return rc;
}

/* FNV-1a, 64 bits, over n bytes. */
static uint64_t hash(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * 0x100000001b3ull;
	return h;
}

int tfk_replica_check(struct tfk_graph *g, struct tfk_optim *o,
		      struct tfk_err *err)
{
	int n = tfk_graph_n_variables(g), size = tfk_mpi_size(), i, rc;
	uint64_t h = 0xcbf29ce484222325ull, *all;

	for (i = 0; i < n; i++) {
		const struct tfk_tensor *t = tfk_graph_var_at(g, i, NULL);

		if (t->dtype != TFK_DT_STRING)
			h = hash(h, t->data, t->nbytes);
	}
	for (i = 0; i < tfk_optim_n_slots(o); i++) {
		int var;
		const char *name;
		const struct tfk_tensor *t = tfk_optim_slot(o, i, &var, &name);

		h = hash(h, t->data, t->nbytes);
	}
	all = tfk_calloc((size_t)size, sizeof(*all));
	if (!all)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	rc = tfk_mpi_allgather(&h, sizeof(h), all, err);
	for (i = 1; !rc && i < size; i++)
		if (all[i] != all[0])
			rc = tfk_errf(err, TFK_EINVAL, "rank %d's weights "
				      "differ from rank 0's: the replicas "
				      "diverged", i);
	tfk_free(all);
	return rc;
}
