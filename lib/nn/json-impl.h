/*
 * json-impl.h - private to lib/nn: checks of the Keras JSON configs that
 * metric.c and optim.c parse (STYLE.md: an unknown key is an error).
 */
#ifndef TFK_NN_JSON_IMPL_H
#define TFK_NN_JSON_IMPL_H

#include "util/err.h"

#include <jansson.h>
#include <string.h>

/* Every key of obj must be in the NULL-terminated keys: 0, or TFK_EINVAL
 * "PATH.KEY: unknown WHAT key" for the first that is not. */
static inline int kjson_known_keys(const json_t *obj, const char *const *keys,
				   const char *path, const char *what,
				   struct tfk_err *err)
{
	const char *k;
	json_t *v;
	int i;

	json_object_foreach((json_t *)obj, k, v) {
		for (i = 0; keys[i]; i++)
			if (!strcmp(k, keys[i]))
				break;
		if (!keys[i])
			return tfk_errf(err, TFK_EINVAL, "%s.%s: unknown %s "
					"key", path, k, what);
	}
	return 0;
}

#endif
