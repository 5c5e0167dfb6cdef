/*
 * modelconfig.c - TF Serving's model config file (modelconfig.h), a walk
 * over the text-format tree of util/textproto.h.
 */
#include "model/modelconfig.h"

#include "formats/serving_apis.pb-c.h"
#include "util/alloc.h"
#include "util/textproto.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tfk_model_config_free(struct tfk_model_config *m)
{
	int i;

	if (!m)
		return;
	tfk_free(m->name);
	tfk_free(m->base_path);
	tfk_free(m->versions);
	for (i = 0; i < m->n_labels; i++)
		tfk_free(m->labels[i].label);
	tfk_free(m->labels);
	memset(m, 0, sizeof(*m));
}

int tfk_model_config_copy(struct tfk_model_config *o,
			  const struct tfk_model_config *c)
{
	int i;

	memset(o, 0, sizeof(*o));
	o->policy = c->policy;
	o->num_versions = c->num_versions;
	o->name = tfk_strdup(c->name);
	o->base_path = tfk_strdup(c->base_path);
	o->versions = tfk_calloc((size_t)c->n_versions + 1,
				 sizeof(*o->versions));
	o->labels = tfk_calloc((size_t)c->n_labels + 1, sizeof(*o->labels));
	if (!o->name || !o->base_path || !o->versions || !o->labels)
		goto nomem;
	if (c->n_versions)
		memcpy(o->versions, c->versions, (size_t)c->n_versions *
		       sizeof(*o->versions));
	o->n_versions = c->n_versions;
	for (i = 0; i < c->n_labels; i++) {
		if (!(o->labels[i].label = tfk_strdup(c->labels[i].label)))
			goto nomem;
		o->labels[i].version = c->labels[i].version;
		o->n_labels++;
	}
	return 0;
nomem:
	tfk_model_config_free(o);
	return TFK_ENOMEM;
}

void tfk_server_config_free(struct tfk_server_config *c)
{
	int i;

	if (!c)
		return;
	for (i = 0; i < c->n_models; i++)
		tfk_model_config_free(&c->models[i]);
	tfk_free(c->models);
	memset(c, 0, sizeof(*c));
}

static int nomem(const char *file, struct tfk_err *err)
{
	return tfk_errf(err, TFK_ENOMEM, "%s: out of memory", file);
}

static int dup_string(const struct tfk_tp_node *f, const char *file,
		      char **out, struct tfk_err *err)
{
	const char *s;

	if (*out)
		return tfk_errf(err, TFK_EINVAL, "%s:%d:%d: field '%s' "
				"given twice", file, f->line, f->col,
				f->name);
	if (tfk_tp_string(f, file, &s, err))
		return err->code;
	if (!(*out = tfk_strdup(s)))
		return nomem(file, err);
	return 0;
}

static int policy(const struct tfk_tp_node *p, const char *file,
		  struct tfk_model_config *m, struct tfk_err *err)
{
	const struct tfk_tp_node *k;
	int64_t v;
	int i, j;

	if (tfk_tp_msg(p, file, err))
		return err->code;
	if (p->n_kids != 1)
		return tfk_errf(err, TFK_EINVAL, "%s:%d:%d: "
				"model_version_policy: give one of latest, "
				"all or specific", file, p->line, p->col);
	k = &p->kids[0];
	if (tfk_tp_msg(k, file, err))
		return err->code;
	if (!strcmp(k->name, "all")) {
		if (k->n_kids)
			return tfk_tp_unknown(&k->kids[0], file, "all",
					      "none", err);
		m->policy = TFK_POLICY_ALL;
		return 0;
	}
	if (!strcmp(k->name, "latest")) {
		m->policy = TFK_POLICY_LATEST;
		for (i = 0; i < k->n_kids; i++) {
			if (strcmp(k->kids[i].name, "num_versions"))
				return tfk_tp_unknown(&k->kids[i], file,
						      "latest",
						      "num_versions", err);
			if (tfk_tp_int(&k->kids[i], file, 0, 1000000, &v,
				       err))
				return err->code;
			/* TF Serving: 0 (the proto default) means 1 */
			m->num_versions = v ? (int)v : 1;
		}
		return 0;
	}
	if (!strcmp(k->name, "specific")) {
		m->policy = TFK_POLICY_SPECIFIC;
		m->versions = tfk_calloc((size_t)k->n_kids + 1,
					 sizeof(*m->versions));
		if (!m->versions)
			return nomem(file, err);
		for (i = 0; i < k->n_kids; i++) {
			if (strcmp(k->kids[i].name, "versions"))
				return tfk_tp_unknown(&k->kids[i], file,
						      "specific", "versions",
						      err);
			if (tfk_tp_int(&k->kids[i], file, 0, INT64_MAX, &v,
				       err))
				return err->code;
			for (j = 0; j < m->n_versions; j++)
				if (m->versions[j] == v)
					break;
			if (j == m->n_versions)
				m->versions[m->n_versions++] = v;
		}
		if (!m->n_versions)
			return tfk_errf(err, TFK_EINVAL, "%s:%d:%d: specific: "
					"no versions given", file, k->line,
					k->col);
		return 0;
	}
	return tfk_tp_unknown(k, file, "model_version_policy",
			      "latest, all, specific", err);
}

static int label(const struct tfk_tp_node *f, const char *file,
		 struct tfk_model_config *m, struct tfk_err *err)
{
	const struct tfk_tp_node *key = NULL, *val = NULL;
	struct tfk_version_label *g;
	const char *s;
	int64_t v = 0;
	int i;

	if (tfk_tp_msg(f, file, err))
		return err->code;
	for (i = 0; i < f->n_kids; i++) {
		if (!strcmp(f->kids[i].name, "key"))
			key = &f->kids[i];
		else if (!strcmp(f->kids[i].name, "value"))
			val = &f->kids[i];
		else
			return tfk_tp_unknown(&f->kids[i], file,
					      "version_labels", "key, value",
					      err);
	}
	if (!key || tfk_tp_string(key, file, &s, err))
		return key ? err->code : tfk_errf(err, TFK_EINVAL,
			"%s:%d:%d: version_labels: no key", file, f->line,
			f->col);
	if (!*s || strchr(s, '/') || strchr(s, ':'))
		return tfk_errf(err, TFK_EINVAL, "%s:%d:%d: version label "
				"'%s' is empty or holds '/' or ':'", file,
				key->line, key->col, s);
	if (val && tfk_tp_int(val, file, 0, INT64_MAX, &v, err))
		return err->code;
	for (i = 0; i < m->n_labels; i++)
		if (!strcmp(m->labels[i].label, s))
			return tfk_errf(err, TFK_EINVAL, "%s:%d:%d: version "
					"label '%s' given twice", file,
					key->line, key->col, s);
	g = tfk_realloc(m->labels, (size_t)(m->n_labels + 1) * sizeof(*g));
	if (!g)
		return nomem(file, err);
	m->labels = g;
	if (!(g[m->n_labels].label = tfk_strdup(s)))
		return nomem(file, err);
	g[m->n_labels++].version = v;
	return 0;
}

static int model(const struct tfk_tp_node *f, const char *file,
		 struct tfk_model_config *m, struct tfk_err *err)
{
	const struct tfk_tp_node *pol = NULL;
	char *platform = NULL;
	int i, rc = 0, j;

	if (tfk_tp_msg(f, file, err))
		return err->code;
	m->num_versions = 1;
	for (i = 0; i < f->n_kids && !rc; i++) {
		const struct tfk_tp_node *k = &f->kids[i];

		if (!strcmp(k->name, "name"))
			rc = dup_string(k, file, &m->name, err);
		else if (!strcmp(k->name, "base_path"))
			rc = dup_string(k, file, &m->base_path, err);
		else if (!strcmp(k->name, "model_platform"))
			rc = dup_string(k, file, &platform, err);
		else if (!strcmp(k->name, "model_version_policy") && !pol)
			rc = policy(pol = k, file, m, err);
		else if (!strcmp(k->name, "version_labels"))
			rc = label(k, file, m, err);
		else if (!strcmp(k->name, "model_version_policy"))
			rc = tfk_errf(err, TFK_EINVAL, "%s:%d:%d: field "
				      "'model_version_policy' given twice",
				      file, k->line, k->col);
		else
			rc = tfk_tp_unknown(k, file, "config", "name, "
					    "base_path, model_platform, "
					    "model_version_policy, "
					    "version_labels", err);
	}
	if (!rc && platform && strcmp(platform, "tensorflow") &&
	    strcmp(platform, "tflite"))
		rc = tfk_errf(err, TFK_EINVAL, "%s:%d:%d: config '%s': "
			      "model_platform '%s' is not served (tensorflow "
			      "or tflite)", file, f->line, f->col,
			      m->name ? m->name : "", platform);
	tfk_free(platform);
	if (rc)
		return rc;
	if (!m->name || !*m->name)
		return tfk_errf(err, TFK_EINVAL, "%s:%d:%d: config: name is "
				"required", file, f->line, f->col);
	if (strchr(m->name, '/') || strchr(m->name, ':'))
		return tfk_errf(err, TFK_EINVAL, "%s:%d:%d: config '%s': a "
				"model name cannot hold '/' or ':'", file,
				f->line, f->col, m->name);
	if (!m->base_path || !*m->base_path)
		return tfk_errf(err, TFK_EINVAL, "%s:%d:%d: config '%s': "
				"base_path is required", file, f->line,
				f->col, m->name);
	if (m->policy != TFK_POLICY_SPECIFIC)
		return 0;
	for (i = 0; i < m->n_labels; i++) {
		for (j = 0; j < m->n_versions; j++)
			if (m->versions[j] == m->labels[i].version)
				break;
		if (j == m->n_versions)
			return tfk_errf(err, TFK_EINVAL, "%s:%d:%d: config "
					"'%s': label '%s' names version %"
					PRId64 ", which the specific policy "
					"does not serve", file, f->line,
					f->col, m->name, m->labels[i].label,
					m->labels[i].version);
	}
	return 0;
}

static int walk(const struct tfk_tp_node *root, const char *file,
		struct tfk_server_config *c, struct tfk_err *err)
{
	const struct tfk_tp_node *list = NULL;
	int i, j;

	for (i = 0; i < root->n_kids; i++) {
		const struct tfk_tp_node *k = &root->kids[i];

		if (strcmp(k->name, "model_config_list"))
			return tfk_tp_unknown(k, file, "ModelServerConfig",
					      "model_config_list", err);
		if (list)
			return tfk_errf(err, TFK_EINVAL, "%s:%d:%d: field "
					"'model_config_list' given twice",
					file, k->line, k->col);
		if (tfk_tp_msg(list = k, file, err))
			return err->code;
	}
	if (!list)
		return tfk_errf(err, TFK_EINVAL, "%s: no model_config_list",
				file);
	c->models = tfk_calloc((size_t)list->n_kids + 1, sizeof(*c->models));
	if (!c->models)
		return nomem(file, err);
	for (i = 0; i < list->n_kids; i++) {
		const struct tfk_tp_node *k = &list->kids[i];

		if (strcmp(k->name, "config"))
			return tfk_tp_unknown(k, file, "model_config_list",
					      "config", err);
		c->n_models++;
		if (model(k, file, &c->models[i], err))
			return err->code;
		for (j = 0; j < i; j++)
			if (!strcmp(c->models[j].name, c->models[i].name))
				return tfk_errf(err, TFK_EINVAL, "%s:%d:%d: "
						"model '%s' configured twice",
						file, k->line, k->col,
						c->models[i].name);
	}
	return 0;
}

/* Walk a parsed tree into *c and free the tree. */
static int from_tree(struct tfk_tp_node *root, const char *file,
		     struct tfk_server_config *c, struct tfk_err *err)
{
	int rc = walk(root, file, c, err);

	tfk_tp_free(root);
	if (rc)
		tfk_server_config_free(c);
	return rc;
}

int tfk_server_config_parse(const char *text, size_t n, const char *file,
			    struct tfk_server_config *c, struct tfk_err *err)
{
	struct tfk_tp_node root;

	memset(c, 0, sizeof(*c));
	if (tfk_tp_parse(text, n, file, &root, err))
		return err->code;
	return from_tree(&root, file, c, err);
}

int tfk_server_config_load(const char *path, struct tfk_server_config *c,
			   struct tfk_err *err)
{
	struct tfk_tp_node root;

	memset(c, 0, sizeof(*c));
	if (tfk_tp_parse_file(path, &root, err))
		return err->code;
	return from_tree(&root, path, c, err);
}

/* The rules of model() and walk() on model i of c, for the binary form. */
static int check_model(const struct tfk_server_config *c, int i,
		       struct tfk_err *err)
{
	const struct tfk_model_config *m = &c->models[i];
	int j, k;

	if (!*m->name)
		return tfk_errf(err, TFK_EINVAL, "config[%d]: name is required",
				i);
	if (strchr(m->name, '/') || strchr(m->name, ':'))
		return tfk_errf(err, TFK_EINVAL, "config[%d] '%s': a model "
				"name cannot hold '/' or ':'", i, m->name);
	if (!*m->base_path)
		return tfk_errf(err, TFK_EINVAL, "config[%d] '%s': base_path "
				"is required", i, m->name);
	for (j = 0; j < i; j++)
		if (!strcmp(c->models[j].name, m->name))
			return tfk_errf(err, TFK_EINVAL, "config[%d]: model "
					"'%s' configured twice", i, m->name);
	if (m->policy == TFK_POLICY_SPECIFIC && !m->n_versions)
		return tfk_errf(err, TFK_EINVAL, "config[%d] '%s': specific: "
				"no versions given", i, m->name);
	for (j = 0; j < m->n_labels; j++) {
		const char *l = m->labels[j].label;

		if (!*l || strchr(l, '/') || strchr(l, ':'))
			return tfk_errf(err, TFK_EINVAL, "config[%d] '%s': "
					"version label '%s' is empty or holds "
					"'/' or ':'", i, m->name, l);
		if (m->labels[j].version < 0)
			return tfk_errf(err, TFK_EINVAL, "config[%d] '%s': "
					"label '%s': a negative version", i,
					m->name, l);
		if (m->policy != TFK_POLICY_SPECIFIC)
			continue;
		for (k = 0; k < m->n_versions; k++)
			if (m->versions[k] == m->labels[j].version)
				break;
		if (k == m->n_versions)
			return tfk_errf(err, TFK_EINVAL, "config[%d] '%s': "
					"label '%s' names version %" PRId64
					", which the specific policy does not "
					"serve", i, m->name, l,
					m->labels[j].version);
	}
	return 0;
}

static int from_msg(const Tensorflow__Serving__ModelConfig *mc, int i,
		    struct tfk_model_config *m, struct tfk_err *err)
{
	const Tensorflow__Serving__ServableVersionPolicy *p =
		mc->model_version_policy;
	size_t j, k;

	m->num_versions = 1;
	if (!(m->name = tfk_strdup(mc->name ? mc->name : "")) ||
	    !(m->base_path = tfk_strdup(mc->base_path ? mc->base_path : "")))
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	if (mc->model_type || mc->logging_config.len)
		return tfk_errf(err, TFK_EINVAL, "config[%d] '%s': model_type "
				"and logging_config are not read", i, m->name);
	if (mc->model_platform && *mc->model_platform &&
	    strcmp(mc->model_platform, "tensorflow") &&
	    strcmp(mc->model_platform, "tflite"))
		return tfk_errf(err, TFK_EINVAL, "config[%d] '%s': "
				"model_platform '%s' is not served (tensorflow "
				"or tflite)", i, m->name, mc->model_platform);
	if (p && p->policy_choice_case ==
	    TENSORFLOW__SERVING__SERVABLE_VERSION_POLICY__POLICY_CHOICE_ALL) {
		m->policy = TFK_POLICY_ALL;
	} else if (p && p->policy_choice_case ==
		   TENSORFLOW__SERVING__SERVABLE_VERSION_POLICY__POLICY_CHOICE_SPECIFIC &&
		   p->specific) {
		m->policy = TFK_POLICY_SPECIFIC;
		m->versions = tfk_calloc(p->specific->n_versions + 1,
					 sizeof(*m->versions));
		if (!m->versions)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		for (j = 0; j < p->specific->n_versions; j++) {
			int64_t v = p->specific->versions[j];

			if (v < 0)
				return tfk_errf(err, TFK_EINVAL, "config[%d] "
						"'%s': a negative version", i,
						m->name);
			for (k = 0; k < (size_t)m->n_versions; k++)
				if (m->versions[k] == v)
					break;
			if (k == (size_t)m->n_versions)
				m->versions[m->n_versions++] = v;
		}
	} else if (p && p->policy_choice_case ==
		   TENSORFLOW__SERVING__SERVABLE_VERSION_POLICY__POLICY_CHOICE_LATEST &&
		   p->latest) {
		if (p->latest->num_versions > 1000000)
			return tfk_errf(err, TFK_EINVAL, "config[%d] '%s': "
					"num_versions %u is more than 1000000",
					i, m->name, p->latest->num_versions);
		if (p->latest->num_versions)
			m->num_versions = (int)p->latest->num_versions;
	}
	if (mc->n_version_labels > 4096)
		return tfk_errf(err, TFK_EINVAL, "config[%d] '%s': more than "
				"4096 version labels", i, m->name);
	m->labels = tfk_calloc(mc->n_version_labels + 1, sizeof(*m->labels));
	if (!m->labels)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	for (j = 0; j < mc->n_version_labels; j++) {
		const char *key = mc->version_labels[j]->key;

		for (k = 0; k < (size_t)m->n_labels; k++)
			if (!strcmp(m->labels[k].label, key ? key : ""))
				break;
		if (k < (size_t)m->n_labels) {	/* a map: the last wins */
			m->labels[k].version = mc->version_labels[j]->value;
			continue;
		}
		if (!(m->labels[m->n_labels].label = tfk_strdup(key ? key :
								 "")))
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		m->labels[m->n_labels++].version =
			mc->version_labels[j]->value;
	}
	return 0;
}

int tfk_server_config_from_proto(
	const struct Tensorflow__Serving__ModelServerConfig *m,
	struct tfk_server_config *c, struct tfk_err *err)
{
	const Tensorflow__Serving__ModelConfigList *l;
	int i, rc = 0;

	memset(c, 0, sizeof(*c));
	if (!m || m->config_case !=
	    TENSORFLOW__SERVING__MODEL_SERVER_CONFIG__CONFIG_MODEL_CONFIG_LIST)
		return tfk_errf(err, TFK_EINVAL, "the config has no "
				"model_config_list (custom_model_config is not "
				"read)");
	l = m->model_config_list;
	if (l && l->n_config > 100000)
		return tfk_errf(err, TFK_EINVAL, "more than 100000 models");
	c->models = tfk_calloc((l ? l->n_config : 0) + 1, sizeof(*c->models));
	if (!c->models)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	for (i = 0; l && i < (int)l->n_config && !rc; i++) {
		c->n_models++;
		rc = from_msg(l->config[i], i, &c->models[i], err);
		if (!rc)
			rc = check_model(c, i, err);
	}
	if (rc)
		tfk_server_config_free(c);
	return rc;
}

int tfk_model_config_wanted(const struct tfk_model_config *c,
			    const int64_t *have, int n, int *want)
{
	int i, j, k = 0;

	for (i = 0; i < n; i++) {
		want[i] = 0;
		switch (c->policy) {
		case TFK_POLICY_LATEST:
			want[i] = k < c->num_versions;
			break;
		case TFK_POLICY_ALL:
			want[i] = 1;
			break;
		case TFK_POLICY_SPECIFIC:
			for (j = 0; j < c->n_versions; j++)
				want[i] |= c->versions[j] == have[i];
			break;
		}
		k += want[i];
	}
	return k;
}
