/*
 * fuzz-jdoc.c - the JSON reader (util/jdoc.h) on arbitrary bytes, with
 * jansson as its oracle: beyond "no crash, no leak, no undefined
 * behaviour", a text one of them takes the other takes too, with the
 * same tree (tests/fuzz/jdoc-jansson.h), and a refusal is TFK_EINVAL
 * with an offset inside the text. Where they differ by design, the
 * input is left out: nesting past TFK_JD_MAX_DEPTH (ours refuses,
 * jansson goes to 2048), NUL in a key (jansson refuses it) and a NUL
 * byte where a token may start (jansson takes it as the end of the
 * text; RFC 8259 does not).
 * FUZZ-SEEDS: tests/fuzz/seeds/fuzz-restjson/*
 */
#include "jdoc-jansson.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tfk_jd_doc d;
	struct tfk_err err;
	json_error_t je;
	json_t *j = json_loadb((const char *)data, size, JSON_DECODE_ANY |
			       JSON_ALLOW_NUL, &je);
	int rc = tfk_jd_parse(&d, (const char *)data, size, 0, &err);
	size_t off;

	if (rc) {
		if (rc != TFK_EINVAL ||
		    sscanf(err.msg, "JSON parse error at offset %zu", &off) != 1 ||
		    off > size)
			abort();
		if (j && !strstr(err.msg, "nested too deeply") &&
		    !(off < size && data[off] == 0))
			abort();	/* jansson took it */
	} else if (!j) {
		if (!strstr(je.text, "NUL byte in object key") &&
		    !strstr(je.text, "maximum parsing depth"))
			abort();	/* jansson refused what we took */
	} else if (!same_tree(&d.root, j)) {
		abort();
	}
	json_decref(j);
	tfk_jd_free(&d);
	return 0;
}
