/*
 * each-signature.h - the loop fuzz-import and fuzz-smrun share: import
 * every signature of every meta graph of a parsed SavedModel, check
 * that the import matches its signature (an error must say why), and
 * hand each import to fn. A header of one static function, included by
 * each target.
 */
#ifndef TFK_FUZZ_EACH_SIGNATURE_H
#define TFK_FUZZ_EACH_SIGNATURE_H

#include "format/savedmodel.h"
#include "graph/graph.h"
#include "model/import.h"

#include <stdlib.h>

static void each_signature(const struct tfk_savedmodel *sm,
			   const char *prefix,
			   void (*fn)(struct tfk_import *imp, void *ctx),
			   void *ctx)
{
	struct tfk_err err;
	int m, s;

	for (m = 0; m < sm->n_meta_graphs; m++)
		for (s = 0; s < sm->meta_graphs[m].n_signatures; s++) {
			const struct tfk_signature *sig =
				&sm->meta_graphs[m].signatures[s];
			struct tfk_import *imp;

			err.msg[0] = 0;
			if (tfk_import_signature(&imp, &sm->meta_graphs[m],
						 sig, prefix, &err)) {
				if (!err.msg[0])
					abort();
				continue;
			}
			if (imp->n_feeds != sig->n_inputs ||
			    imp->n_fetches != sig->n_outputs ||
			    tfk_graph_n_outputs(imp->g) != sig->n_outputs)
				abort();
			fn(imp, ctx);
			tfk_import_free(imp);
		}
}

#endif
