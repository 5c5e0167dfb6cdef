/*
 * expr.h - the filter expression language of tfk-filter.
 *
 * An expression is parsed once into a small tree and then evaluated
 * against each decoded tf.Example. Grammar (lowest precedence first;
 * binary operators are left-associative):
 *
 *   cond    := and ( "or" and )*
 *   and     := not ( "and" not )*
 *   not     := "not" not | cmp
 *   cmp     := sum [ ( "==" | "!=" | "<" | "<=" | ">" | ">=" ) sum
 *                  | "~" STRING ]
 *   sum     := prod ( ( "+" | "-" ) prod )*
 *   prod    := unary ( ( "*" | "/" | "%" ) unary )*
 *   unary   := "-" unary | postfix
 *   postfix := feat [ "[" sum "]" ]  |  primary
 *   feat    := IDENT | "feature" "(" STRING ")"
 *   primary := INT | FLOAT | STRING | "true" | "false" | "(" cond ")"
 *            | "len" "(" feat ")" | "has" "(" feat ")" | "random" "(" ")"
 *            | "startswith" "(" sum "," sum ")"
 *
 *   IDENT   [A-Za-z_][A-Za-z0-9_]*, not a keyword (and or not true false)
 *           and not a function name followed by "("
 *   INT     decimal digits (an int64; -9223372036854775808 is allowed)
 *   FLOAT   digits with "." and/or an exponent (a double)
 *   STRING  "..." with escapes \" \\ \n \t \r \0 \xHH (bytes)
 *
 * Values: int64 (int64 features, INT, len), double (float features,
 * FLOAT, random, "/"), bytes (bytes features, STRING), bool (conditions)
 * and "no value". A feature reference stands for its one value: a
 * feature holding zero or several values (or of no kind), f[i] outside
 * the list (i < 0 counts from the end, as in Python) and x % 0 give
 * "no value", which behaves like NaN: arithmetic with it gives no
 * value, every comparison with it is false except "!=", which is true.
 * So `f == 3` means "f holds exactly one value and it is 3", and
 * `f != 3` is exactly `not f == 3`. Referring to a feature the record
 * does not have is a run-time error (test with has(f) first; "and" and
 * "or" short-circuit); len(f) of a missing feature is 0.
 *
 * Numbers: int op int stays int64 for + - * % (wrapping on overflow, %
 * floored like Python's); "/" is true division (double, IEEE: x/0 is
 * +-inf). Mixed comparisons compare as doubles. Strings compare as
 * bytes (memcmp order, a prefix first). "~" matches a POSIX extended
 * regex (regcomp once, unanchored search); startswith(a, b) is a prefix
 * test. random() is a uniform double in [0, 1) that depends only on
 * the seed, the record's position and which random() call it is (the
 * k-th in the text, from 0): see tfk_expr_random.
 *
 * Types are checked while parsing where they are known (literals,
 * conditions, arithmetic), so `x + "a"` or `x and 1` are parse errors;
 * a feature's kind is known only per record, so comparing a bytes
 * feature with a number is a run-time error naming the feature.
 */
#ifndef TFK_EXPR_H
#define TFK_EXPR_H

#include <stddef.h>
#include <stdint.h>

#include "example/example.h"
#include "util/err.h"

struct tfk_expr;

/*
 * Parse the NUL-terminated src into *e. Errors: TFK_EINVAL with
 * "expression:LINE:COL: what" (1-based, COL counts bytes) and, when
 * err_off is not NULL, *err_off set to the byte offset of the error in
 * src (for a caret line); TFK_ENOMEM. On failure *e is NULL.
 */
int tfk_expr_parse(struct tfk_expr **e, const char *src, size_t *err_off,
		   struct tfk_err *err);
void tfk_expr_free(struct tfk_expr *e);

/* Seed of random() (default 0). */
void tfk_expr_set_seed(struct tfk_expr *e, uint64_t seed);

/*
 * Evaluate e against ex; pos is the record's position in the stream
 * (random() depends on it). Returns 1 (holds), 0 (does not), or a
 * negative code: TFK_EINVAL for a type error or a missing feature,
 * with a message naming the feature ("feature \"x\": ..."; callers
 * prefix file and record), TFK_ENOMEM. Not thread-safe: one e per
 * thread (scratch memory lives in e).
 */
int tfk_expr_eval(struct tfk_expr *e, const struct tfk_example *ex,
		  uint64_t pos, struct tfk_err *err);

/* Number of random() calls in e (0: the result ignores pos). */
unsigned tfk_expr_n_random(const struct tfk_expr *e);

/*
 * The k-th random() of the record at pos under seed: with splitmix64's
 * finalizer mix(x) (Steele, Lea, Flood 2014: x += 0x9e3779b97f4a7c15;
 * then xor-shift-multiply by 0xbf58476d1ce4e5b9, 0x94d049bb133111eb),
 *   h = mix(seed ^ mix(pos ^ mix(k)))
 * and the result is (h >> 11) * 2^-53, a double in [0, 1).
 */
double tfk_expr_random(uint64_t seed, uint64_t pos, uint64_t k);

/* splitmix64's finalizer as above, for other seeded tools (tfk-split). */
uint64_t tfk_expr_mix64(uint64_t x);

#endif
