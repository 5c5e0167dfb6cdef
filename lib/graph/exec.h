/*
 * exec.h - run a graph: prune, plan memory once, run kernels.
 *
 * tfk_exec_new takes the feed names (Placeholders) and fetch names
 * (tfk_graph_find spelling) and keeps only the nodes the fetches need.
 * Each needed node gets a kernel of the chosen backend (falling back to
 * "cpu"). A run re-infers shapes from the concrete feed shapes (so a
 * batch dimension may change between runs), and when they differ from
 * the last run's, recomputes the memory plan: every intermediate output
 * is a slice of one arena, and outputs whose lifetimes (from the step
 * that writes them to the last step that reads them; fetched outputs
 * live to the end) do not overlap share bytes. The arena only grows, so
 * runs alternating between batch sizes stop allocating once the largest
 * has been seen; a run with unchanged shapes allocates nothing.
 * Reshape, Identity, Squeeze and ExpandDims outputs are views of their
 * input's bytes (no copy), except a fetched one whose input is a feed.
 *
 * TFK_PROFILE=1 in the environment when the exec is made: wall time per
 * node is summed over runs and printed to stderr when it is freed.
 * While util/profile.h's recorder records, each kernel run is an op
 * event ("node:Op") and each planned buffer a memory allocation from
 * its step to its last reader's (fetched ones to the end of the run).
 *
 * Feeds are borrowed for the run (a Placeholder's output is the feed
 * itself, not a copy); Const outputs are the node's value; VariableV2
 * outputs are the variable's tensor as it is at the start of the run.
 *
 * Randomness: each run has a key from (seed, step); each node's kernel
 * gets a key from (run key, node index), so results depend on seed and
 * step only, never on threads or on which other nodes are fetched.
 *
 * One exec is used by one thread at a time; the graph must outlive it
 * and may grow (nodes appended later are not part of it), but its
 * variables must keep their dtype, shape and data pointer.
 */
#ifndef TFK_EXEC_H
#define TFK_EXEC_H

#include "graph/graph.h"
#include "graph/tensor.h"
#include "util/err.h"

#include <stddef.h>
#include <stdint.h>

struct tfk_exec;

struct tfk_exec_opts {
	const char *backend;	/* NULL: "cpu" */
	uint64_t seed;
	int threads;		/* for kernels that thread; <= 0: 1 */
};

struct tfk_exec_stats {
	size_t arena_bytes;	/* bytes of the current plan */
	size_t sum_bytes;	/* sum of all planned buffers (no reuse) */
	size_t capacity;	/* bytes the arena holds (>= arena_bytes) */
	int n_nodes;		/* nodes kept after pruning */
	int n_plans;		/* plans made so far */
	int n_allocs;		/* arena (re)allocations so far */
};

/*
 * Prepare to run g for fetches[0..n_fetch) given feeds[0..n_feed)
 * (names of Placeholder nodes). Every Placeholder a fetch needs must be
 * fed. opts may be NULL. 0, TFK_ENOTFOUND (unknown name), TFK_EINVAL
 * ("feed 'x': node y is not a Placeholder", "fetch 'y' needs
 * placeholder 'x', which is not fed", "node n: no kernel for backend
 * cpu") or TFK_ENOMEM; *x NULL on failure.
 */
int tfk_exec_new(struct tfk_exec **x, const struct tfk_graph *g,
		 const char *const *feeds, int n_feed,
		 const char *const *fetches, int n_fetch,
		 const struct tfk_exec_opts *opts, struct tfk_err *err);
/*
 * on 1: let later runs take feeds of any shape (dtype still checked): a
 * fed value replaces its Placeholder, as in TensorFlow's C++ Session,
 * which TF Serving feeds through; shapes are inferred from the feeds.
 */
void tfk_exec_any_shape(struct tfk_exec *x, int on);
/* Free the exec, its arena and kernel state. NULL is fine. */
void tfk_exec_free(struct tfk_exec *x);

/*
 * Run once. feeds[i] is the value for the i-th feed name (dtype must
 * match, shape must fit the Placeholder's: same rank, equal known
 * dims; any shape after tfk_exec_any_shape). step selects the RNG key. fetched[j] receives a borrowed
 * pointer to the j-th fetch's value, valid until the next run or free.
 * 0, TFK_EINVAL ("feed 'x': expected float32 [?, 784], got float32
 * [32, 28, 28]"; shape errors found by inference, "node n: ..."; an
 * inferred output over the tensor byte budget, "node n: output 0:
 * tensor float32 [...] is N bytes, more than the limit of M
 * (TFK_MAX_TENSOR_BYTES)", checked for every output before any kernel
 * runs), a kernel's error prefixed "node n: ", or TFK_ENOMEM.
 */
int tfk_exec_run(struct tfk_exec *x, const struct tfk_tensor *feeds,
		 uint64_t step, const struct tfk_tensor **fetched,
		 struct tfk_err *err);

void tfk_exec_stats(const struct tfk_exec *x, struct tfk_exec_stats *s);

/*
 * During each later run, call fn(ctx, j, value) as soon as fetch j's
 * value is final (its node has run), in run order, so that a caller can
 * start work on early results (data-parallel training sends gradients
 * while the backward pass goes on). value is what fetched[j] will hold.
 * fn NULL: no calls. 0 or TFK_ENOMEM.
 */
int tfk_exec_on_fetch(struct tfk_exec *x,
		      void (*fn)(void *ctx, int j, const struct tfk_tensor *v),
		      void *ctx, struct tfk_err *err);
/* When fetch j becomes final in a run: fetches with smaller values are
 * final earlier (ties: the same node). Fixed once the exec is made. */
int tfk_exec_fetch_when(const struct tfk_exec *x, int j);

#endif
