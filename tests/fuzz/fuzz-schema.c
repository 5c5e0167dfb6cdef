/*
 * fuzz-schema.c - tfk_schema_parse on arbitrary bytes.
 *
 * Beyond "no crash, no leak": whatever the reader accepts, the writer
 * must render as a document the reader accepts again, and that second
 * rendering must be a fixed point (render(parse(render(x))) equals
 * render(x)), so a schema survives any number of read/write cycles.
 */
#include "example/schema.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tfk_schema s, t, u;
	struct tfk_buf a, b, c;
	struct tfk_err err;

	if (tfk_schema_parse(&s, "fuzz", (const char *)data, size, &err)) {
		tfk_schema_release(&s);
		return 0;
	}
	tfk_buf_init(&a);
	tfk_buf_init(&b);
	tfk_buf_init(&c);
	if (tfk_schema_to_json(&s, &a))
		abort();
	if (tfk_schema_parse(&t, "again", (const char *)a.data, a.len, &err))
		abort();	/* the writer wrote what the reader refuses */
	if (tfk_schema_to_json(&t, &b))
		abort();
	if (tfk_schema_parse(&u, "thrice", (const char *)b.data, b.len, &err))
		abort();
	if (tfk_schema_to_json(&u, &c))
		abort();
	if (b.len != c.len || memcmp(b.data, c.data, b.len))
		abort();	/* not a fixed point */
	tfk_buf_release(&a);
	tfk_buf_release(&b);
	tfk_buf_release(&c);
	tfk_schema_release(&s);
	tfk_schema_release(&t);
	tfk_schema_release(&u);
	return 0;
}
