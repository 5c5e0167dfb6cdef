/*
 * jdoc-jansson.h - jansson as the oracle of util/jdoc's trees, shared by
 * tests/unit/t-jdoc.c and tests/fuzz/fuzz-jdoc.c.
 */
#ifndef TFK_TEST_JDOC_JANSSON_H
#define TFK_TEST_JDOC_JANSSON_H

#include "util/jdoc.h"

#include <jansson.h>
#include <string.h>

/* v equals jansson's j, key order and last-wins duplicates included. */
static inline int same_tree(const struct tfk_jd *v, const json_t *j)
{
	uint32_t k;

	switch (v->type) {
	case TFK_JD_NULL: return json_is_null(j);
	case TFK_JD_TRUE: return json_is_true(j);
	case TFK_JD_FALSE: return json_is_false(j);
	case TFK_JD_INT:
		return json_is_integer(j) && json_integer_value(j) == v->u.i;
	case TFK_JD_REAL:
		return json_is_real(j) && json_real_value(j) == v->u.d;
	case TFK_JD_STRING:
		return json_is_string(j) && json_string_length(j) == v->n &&
			!memcmp(json_string_value(j), v->u.s, v->n) &&
			v->u.s[v->n] == 0;
	case TFK_JD_ARRAY:
		if (!json_is_array(j) || json_array_size(j) != v->n)
			return 0;
		for (k = 0; k < v->n; k++)
			if (!same_tree(&v->u.items[k], json_array_get(j, k)))
				return 0;
		return 1;
	case TFK_JD_OBJECT:
		if (!json_is_object(j))
			return 0;
		for (k = 0; k < v->n; k++) {
			const json_t *m = json_object_get(j,
							  tfk_jd_key(v, k));

			if (!m || tfk_jd_get(v, tfk_jd_key(v, k)) !=
			    tfk_jd_member(v, k))
				continue;	/* shadowed by a later one */
			if (!same_tree(tfk_jd_member(v, k), m))
				return 0;
		}
		return json_object_size(j) <= v->n;
	}
	return 0;
}

#endif
