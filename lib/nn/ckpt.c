/*
 * ckpt.c - training checkpoints (see ckpt.h).
 *
 * The tensors go to a TF tensor bundle rather than a format of our own
 * so that the SavedModel writer can later reuse them as variables/ and
 * TensorFlow's checkpoint reader can list them. The loop state is
 * JSON: it is small, read by people when a run misbehaves, and it
 * carries the spec, which is JSON already. A restore reads everything
 * into temporaries before writing any variable: a checkpoint that does
 * not match the model must not leave it half restored.
 */
#include "nn/ckpt.h"

#include "io/out.h"
#include "format/bundle.h"
#include "util/alloc.h"
#include "util/buf.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char *cat2(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	char *s = tfk_malloc(na + nb + 1);

	if (s) {
		memcpy(s, a, na);
		memcpy(s + na, b, nb + 1);
	}
	return s;
}

static int write_text(const char *path, const char *text, size_t n,
		      struct tfk_err *err)
{
	struct tfk_out *out;
	int rc = tfk_out_open(&out, path, 0, err);

	if (rc)
		return rc;
	rc = tfk_out_write(out, text, n, err);
	if (rc) {
		tfk_out_discard(out);
		return rc;
	}
	return tfk_out_close(out, err);
}

int tfk_ckpt_write(const char *prefix, struct tfk_graph *g,
		   struct tfk_optim *o, const int *opt_var,
		   const json_t *state, struct tfk_err *err)
{
	int nv = tfk_graph_n_variables(g);
	int ns = o ? tfk_optim_n_slots(o) : 0;
	int n = 0, i, rc = TFK_ENOMEM;
	const char **keys = tfk_calloc((size_t)(nv + ns) + 1, sizeof(*keys));
	char **owned = tfk_calloc((size_t)ns + 1, sizeof(*owned));
	const struct tfk_tensor **ts =
		tfk_calloc((size_t)(nv + ns) + 1, sizeof(*ts));
	char *path = NULL, *text = NULL;

	if (!keys || !owned || !ts)
		goto out;
	for (i = 0; i < nv; i++) {
		ts[n] = tfk_graph_var_at(g, i, &keys[n]);
		n++;
	}
	for (i = 0; i < ns; i++) {
		const char *slot, *vname;
		int var;
		struct tfk_tensor *t = tfk_optim_slot(o, i, &var, &slot);

		tfk_graph_var_at(g, opt_var[var], &vname);
		owned[i] = tfk_malloc(strlen(vname) + strlen(slot) + 12);
		if (!owned[i])
			goto out;
		sprintf(owned[i], "optimizer/%s/%s", vname, slot);
		keys[n] = owned[i];
		ts[n++] = t;
	}
	rc = tfk_bundle_write(prefix, n, keys, ts, err);
	if (rc)
		goto out;
	rc = TFK_ENOMEM;
	text = json_dumps(state, JSON_INDENT(1) | JSON_PRESERVE_ORDER |
			  JSON_REAL_PRECISION(17));
	path = cat2(prefix, ".json");
	if (!text || !path)
		goto out;
	rc = write_text(path, text, strlen(text), err);
out:
	if (rc == TFK_ENOMEM && err && !err->code)
		tfk_errf(err, TFK_ENOMEM, "%s: out of memory", prefix);
	for (i = 0; owned && i < ns; i++)
		tfk_free(owned[i]);
	tfk_free(owned);
	tfk_free(keys);
	tfk_free(ts);
	tfk_free(path);
	free(text);		/* jansson's allocator */
	return rc;
}

int tfk_ckpt_read_state(const char *prefix, json_t **state,
			struct tfk_err *err)
{
	char *path = cat2(prefix, ".json");
	json_error_t je;

	*state = NULL;
	if (!path)
		return tfk_errf(err, TFK_ENOMEM, "%s: out of memory", prefix);
	*state = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	if (!*state) {
		int rc = access(path, R_OK) ? TFK_EIO : TFK_ECORRUPT;

		if (rc == TFK_EIO)
			tfk_errf(err, rc, "%s: %s", path, strerror(errno));
		else
			tfk_errf(err, rc, "%s: line %d: %s", path, je.line,
				 je.text);
		tfk_free(path);
		return rc;
	}
	tfk_free(path);
	if (!json_is_object(*state)) {
		json_decref(*state);
		*state = NULL;
		return tfk_errf(err, TFK_ECORRUPT, "%s.json: not a JSON object",
				prefix);
	}
	return 0;
}

/* Read key into *t and check it against want's dtype and shape. */
static int read_match(struct tfk_bundle *b, const char *prefix,
		      const char *key, const struct tfk_tensor *want,
		      struct tfk_tensor *t, struct tfk_err *err)
{
	char s1[96], s2[96];
	int rc = tfk_bundle_read(b, key, t, err);

	if (rc)
		return rc;
	if (t->dtype != want->dtype ||
	    !tfk_shape_equal(t->rank, t->shape, want->rank, want->shape)) {
		tfk_errf(err, TFK_EINVAL, "%s.index: %s: %s %s in the "
			 "checkpoint, the model has %s %s", prefix, key,
			 tfk_dtype_name(t->dtype),
			 tfk_shape_str(t->rank, t->shape, s1, sizeof(s1)),
			 tfk_dtype_name(want->dtype),
			 tfk_shape_str(want->rank, want->shape, s2,
				       sizeof(s2)));
		tfk_tensor_release(t);
		return TFK_EINVAL;
	}
	return 0;
}

/* Is key one of g's variables? */
static int is_var(struct tfk_graph *g, const char *key)
{
	for (int i = 0; i < tfk_graph_n_variables(g); i++) {
		const char *name;

		tfk_graph_var_at(g, i, &name);
		if (!strcmp(name, key))
			return 1;
	}
	return 0;
}

enum { R_VARS = 1, R_SLOTS = 2, R_EXACT = 4 };

/* The restores below: R_VARS the variables, R_SLOTS the optimizer's
 * slots, R_EXACT: no bundle key beyond the variables. */
static int restore(const char *prefix, struct tfk_graph *g,
		   struct tfk_optim *o, int n_opt, const int *opt_var,
		   int what, struct tfk_err *err)
{
	int nv = (what & R_VARS) ? tfk_graph_n_variables(g) : 0;
	int ns = 0, i, rc;
	struct tfk_bundle *b = NULL;
	struct tfk_tensor *vt = NULL, *st = NULL;
	struct tfk_tensor **vars = NULL;
	char *key = NULL;

	if (!(what & R_SLOTS))
		o = NULL;
	rc = tfk_bundle_open(&b, prefix, err);
	if (rc)
		return rc;
	if (what & R_EXACT) {
		for (i = 0; i < tfk_bundle_n(b); i++) {
			const char *k = tfk_bundle_key(b, i);

			if (!is_var(g, k)) {
				rc = tfk_errf(err, TFK_EINVAL, "%s.index: "
					      "variable '%s' is not in the "
					      "model", prefix, k);
				goto out;
			}
		}
	}
	rc = TFK_ENOMEM;
	vt = tfk_calloc((size_t)nv + 1, sizeof(*vt));
	if (!vt)
		goto out;
	for (i = 0; i < nv; i++) {
		const char *name;
		struct tfk_tensor *v = tfk_graph_var_at(g, i, &name);

		rc = read_match(b, prefix, name, v, &vt[i], err);
		if (rc == TFK_ENOTFOUND && (what & R_EXACT))
			tfk_errf(err, rc, "%s.index: the model's variable "
				 "'%s' is missing", prefix, name);
		if (rc)
			goto out;
	}
	if (o) {
		rc = TFK_ENOMEM;
		vars = tfk_calloc((size_t)n_opt + 1, sizeof(*vars));
		if (!vars)
			goto out;
		for (i = 0; i < n_opt; i++)
			vars[i] = tfk_graph_var_at(g, opt_var[i], NULL);
		rc = tfk_optim_init_slots(o, n_opt, vars, err);
		if (rc)
			goto out;
		ns = tfk_optim_n_slots(o);
		rc = TFK_ENOMEM;
		st = tfk_calloc((size_t)ns + 1, sizeof(*st));
		if (!st)
			goto out;
		for (i = 0; i < ns; i++) {
			const char *slot, *vname;
			int var;
			struct tfk_tensor *t = tfk_optim_slot(o, i, &var,
							      &slot);

			tfk_graph_var_at(g, opt_var[var], &vname);
			tfk_free(key);
			key = tfk_malloc(strlen(vname) + strlen(slot) + 12);
			if (!key) {
				rc = TFK_ENOMEM;
				goto out;
			}
			sprintf(key, "optimizer/%s/%s", vname, slot);
			rc = read_match(b, prefix, key, t, &st[i], err);
			if (rc)
				goto out;
		}
	}
	/* Everything matched: now write. */
	for (i = 0; i < nv; i++) {
		struct tfk_tensor *v = tfk_graph_var_at(g, i, NULL);

		memcpy(v->data, vt[i].data, v->nbytes);
	}
	for (i = 0; i < ns; i++) {
		const char *slot;
		int var;
		struct tfk_tensor *t = tfk_optim_slot(o, i, &var, &slot);

		memcpy(t->data, st[i].data, t->nbytes);
	}
	rc = 0;
out:
	if (rc == TFK_ENOMEM && err && !err->code)
		tfk_errf(err, TFK_ENOMEM, "%s: out of memory", prefix);
	for (i = 0; vt && i < nv; i++)
		tfk_tensor_release(&vt[i]);
	for (i = 0; st && i < ns; i++)
		tfk_tensor_release(&st[i]);
	tfk_free(vt);
	tfk_free(st);
	tfk_free(vars);
	tfk_free(key);
	tfk_bundle_close(b);
	return rc;
}

int tfk_ckpt_restore(const char *prefix, struct tfk_graph *g,
		     struct tfk_optim *o, int n_opt, const int *opt_var,
		     struct tfk_err *err)
{
	return restore(prefix, g, o, n_opt, opt_var, R_VARS | R_SLOTS, err);
}

int tfk_ckpt_restore_vars(const char *prefix, struct tfk_graph *g,
			  struct tfk_err *err)
{
	return restore(prefix, g, NULL, 0, NULL, R_VARS | R_EXACT, err);
}

int tfk_ckpt_restore_slots(const char *prefix, struct tfk_graph *g,
			   struct tfk_optim *o, int n_opt, const int *opt_var,
			   struct tfk_err *err)
{
	return restore(prefix, g, o, n_opt, opt_var, R_SLOTS, err);
}

int tfk_ckpt_set_latest(const char *dir, const char *name,
			const char *const *all, int n, struct tfk_err *err)
{
	struct tfk_buf b;
	char *path = tfk_malloc(strlen(dir) + 12);
	int rc, i;

	if (!path)
		return tfk_errf(err, TFK_ENOMEM, "%s: out of memory", dir);
	sprintf(path, "%s/checkpoint", dir);
	tfk_buf_init(&b);
	tfk_buf_adds(&b, "model_checkpoint_path: ");
	tfk_buf_add_json_str(&b, name, strlen(name));
	tfk_buf_addc(&b, '\n');
	for (i = 0; i < n; i++) {
		tfk_buf_adds(&b, "all_model_checkpoint_paths: ");
		tfk_buf_add_json_str(&b, all[i], strlen(all[i]));
		tfk_buf_addc(&b, '\n');
	}
	if (b.oom)
		rc = tfk_errf(err, TFK_ENOMEM, "%s: out of memory", path);
	else
		rc = write_text(path, (const char *)b.data, b.len, err);
	tfk_buf_release(&b);
	tfk_free(path);
	return rc;
}

int tfk_ckpt_latest(const char *dir, char *buf, size_t n,
		    struct tfk_err *err)
{
	char *path = tfk_malloc(strlen(dir) + 12), line[1024];
	const char *key = "model_checkpoint_path:";
	FILE *f;
	int rc = TFK_ECORRUPT;

	if (!path)
		return tfk_errf(err, TFK_ENOMEM, "%s: out of memory", dir);
	sprintf(path, "%s/checkpoint", dir);
	f = fopen(path, "r");
	if (!f) {
		rc = errno == ENOENT ?
			tfk_errf(err, TFK_ENOTFOUND, "%s: no checkpoint", dir) :
			tfk_errf(err, TFK_EIO, "%s: %s", path, strerror(errno));
		tfk_free(path);
		return rc;
	}
	tfk_errf(err, TFK_ECORRUPT, "%s: no model_checkpoint_path", path);
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *q;
		size_t k;

		if (strncmp(p, key, strlen(key)))
			continue;
		p += strlen(key);
		p += strspn(p, " \t");
		q = *p == '"' ? strchr(p + 1, '"') : NULL;
		if (!q || q == p + 1 || memchr(p + 1, '\\', q - p - 1)) {
			tfk_errf(err, TFK_ECORRUPT, "%s: malformed "
				 "model_checkpoint_path", path);
			break;
		}
		*q = '\0';
		p++;
		/* Relative names are relative to dir, as TF's. */
		k = *p == '/' ? (size_t)snprintf(buf, n, "%s", p) :
			(size_t)snprintf(buf, n, "%s/%s", dir, p);
		if (k >= n) {
			tfk_errf(err, TFK_EINVAL, "%s: path too long", path);
			rc = TFK_EINVAL;
			break;
		}
		tfk_err_clear(err);
		rc = 0;
		break;
	}
	fclose(f);
	tfk_free(path);
	return rc;
}

void tfk_ckpt_remove(const char *prefix)
{
	static const char *const ext[] = {
		".json", ".index", ".data-00000-of-00001"
	};
	size_t n = strlen(prefix) + 24;
	char *p = tfk_malloc(n);

	if (!p)
		return;
	for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
		snprintf(p, n, "%s%s", prefix, ext[i]);
		unlink(p);
	}
	tfk_free(p);
}
