/*
 * limit.c - budgets from the environment (see limit.h).
 *
 * The variable is read at each use, not cached: a budget is checked
 * once per tensor, record or import, where getenv costs nothing next
 * to the work it guards, and tests may change it between calls.
 * Rejected: one global setter, which every caller in a process shares
 * and a library user could not scope to one reader.
 */
#include "util/limit.h"

#include <errno.h>
#include <stdlib.h>

int tfk_size_parse(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	uint64_t mul = 1;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case 'k': case 'K': mul = 1ull << 10; end++; break;
	case 'm': case 'M': mul = 1ull << 20; end++; break;
	case 'g': case 'G': mul = 1ull << 30; end++; break;
	case 't': case 'T': mul = 1ull << 40; end++; break;
	}
	if (*end == 'i' && mul > 1)
		end++;
	if ((*end == 'b' || *end == 'B') && mul > 1)
		end++;
	if (*end || v > UINT64_MAX / mul)
		return -1;
	*out = v * mul;
	return 0;
}

int tfk_limit_get(const char *env, uint64_t def, uint64_t *out,
		  struct tfk_err *err)
{
	const char *s = getenv(env);

	if (!s || !*s) {
		*out = def;
		return 0;
	}
	if (tfk_size_parse(s, out))
		return tfk_errf(err, TFK_EINVAL, "%s: '%.64s' is not a size",
				env, s);
	return 0;
}
