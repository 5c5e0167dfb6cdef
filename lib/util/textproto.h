/*
 * textproto.h - protocol buffers' text format, read into a tree.
 *
 * TF Serving's configuration files (--model_config_file,
 * --batching_parameters_file, --monitoring_config_file) are text-format
 * messages, and protobuf-c reads none. This reader knows the syntax, not
 * any schema: a caller walks the tree and checks names and types, with
 * the line and column of every field at hand for its messages.
 *
 * Syntax taken: fields `name: scalar`, `name { ... }`, `name: { ... }`
 * and `name < ... >`; an optional `,` or `;` after each field; lists
 * `name: [a, b]` and `name: [{...}, {...}]`, read as the same field
 * repeated; `#` comments; strings in '...' or "..." with C escapes
 * (\n \t \r \a \b \f \v \\ \' \" \? \xHH, \ooo), adjacent strings
 * joined; identifiers (true, enum names) and numbers (decimal, 0x hex,
 * floats, a leading '-') kept as their text. Extension names `[a.b]`
 * and Any's `[type.googleapis.com/...]` are refused.
 */
#ifndef TFK_TEXTPROTO_H
#define TFK_TEXTPROTO_H

#include "util/err.h"

#include <stddef.h>
#include <stdint.h>

/* Nesting deeper than this is refused (a config is a few levels deep). */
#define TFK_TP_MAX_DEPTH 64

struct tfk_tp_node {
	char *name;
	int line, col;			/* of the field's name, from 1 */
	int is_msg;			/* { ... }: kids; else a scalar */
	int is_string;			/* a quoted scalar */
	char *value;			/* scalar: decoded, NUL-terminated */
	size_t value_len;		/* (strings may hold NULs) */
	struct tfk_tp_node *kids;
	int n_kids;
};

/*
 * Parse text[0..n) into *root (a message node named "" at 1:1; pair with
 * tfk_tp_free). file names the text in messages:
 *   "models.config:3:12: expected ':' or '{' after 'name', found '}'"
 * Errors: TFK_ECORRUPT (syntax), TFK_ETRUNC (the text ends inside a
 * message or string), TFK_ENOMEM. *root is empty on failure.
 */
int tfk_tp_parse(const char *text, size_t n, const char *file,
		 struct tfk_tp_node *root, struct tfk_err *err);
void tfk_tp_free(struct tfk_tp_node *root);
/* The same for the file at path (the path names it in messages); a file
 * over TFK_TP_MAX_FILE_BYTES is refused (TFK_EINVAL), one that cannot
 * be read is TFK_EIO. */
#define TFK_TP_MAX_FILE_BYTES (16u << 20)
int tfk_tp_parse_file(const char *path, struct tfk_tp_node *root,
		      struct tfk_err *err);

/*
 * Typed reads of a scalar node, with "file:line:col: field 'name': ..."
 * errors (TFK_EINVAL): a string must be quoted, valid UTF-8 and free of
 * NUL bytes (as protobuf's string fields); an integer must be a
 * whole decimal or hex number within [lo, hi]; a bool is true/false/
 * True/False/t/f/1/0, as protobuf's parser takes.
 */
int tfk_tp_string(const struct tfk_tp_node *f, const char *file,
		  const char **s, struct tfk_err *err);
int tfk_tp_int(const struct tfk_tp_node *f, const char *file, int64_t lo,
	       int64_t hi, int64_t *v, struct tfk_err *err);
int tfk_tp_bool(const struct tfk_tp_node *f, const char *file, int *v,
		struct tfk_err *err);
/* A message node, or the error "field 'name': expected a message { }". */
int tfk_tp_msg(const struct tfk_tp_node *f, const char *file,
	       struct tfk_err *err);

/*
 * "file:line:col: unknown field 'name' in WHERE (known: a, b)" -
 * TFK_EINVAL, for a caller's walk over kids it does not know.
 */
int tfk_tp_unknown(const struct tfk_tp_node *f, const char *file,
		   const char *where, const char *known, struct tfk_err *err);

#endif
