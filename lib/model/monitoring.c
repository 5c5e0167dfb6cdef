/*
 * monitoring.c - TF Serving's monitoring config file (monitoring.h), a
 * walk over the text-format tree of util/textproto.h.
 */
#include "model/monitoring.h"

#include "util/textproto.h"

#include <string.h>

static int prometheus(const struct tfk_tp_node *f, const char *file,
		      struct tfk_monitoring_config *c, struct tfk_err *err)
{
	const char *s;
	int i;

	if (tfk_tp_msg(f, file, err))
		return err->code;
	for (i = 0; i < f->n_kids; i++) {
		const struct tfk_tp_node *k = &f->kids[i];

		if (!strcmp(k->name, "enable")) {
			if (tfk_tp_bool(k, file, &c->prometheus, err))
				return err->code;
		} else if (!strcmp(k->name, "path")) {
			if (tfk_tp_string(k, file, &s, err))
				return err->code;
			if (*s && (*s != '/' || strlen(s) >= sizeof(c->path)))
				return tfk_errf(err, TFK_EINVAL, "%s:%d:%d: "
						"path '%s' does not start with "
						"'/' or is over 255 bytes",
						file, k->line, k->col, s);
			if (*s)
				strcpy(c->path, s);
		} else {
			return tfk_tp_unknown(k, file, "prometheus_config",
					      "enable, path", err);
		}
	}
	return 0;
}

/* Walk a parsed tree into *c and free the tree. */
static int from_tree(struct tfk_tp_node *root, const char *file,
		     struct tfk_monitoring_config *c, struct tfk_err *err)
{
	int i, rc = 0;

	for (i = 0; i < root->n_kids && !rc; i++) {
		if (!strcmp(root->kids[i].name, "prometheus_config"))
			rc = prometheus(&root->kids[i], file, c, err);
		else
			rc = tfk_tp_unknown(&root->kids[i], file,
					    "MonitoringConfig",
					    "prometheus_config", err);
	}
	tfk_tp_free(root);
	return rc;
}

static void defaults(struct tfk_monitoring_config *c)
{
	memset(c, 0, sizeof(*c));
	strcpy(c->path, TFK_PROMETHEUS_PATH);
}

int tfk_monitoring_config_parse(const char *text, size_t n, const char *file,
				struct tfk_monitoring_config *c,
				struct tfk_err *err)
{
	struct tfk_tp_node root;

	defaults(c);
	if (tfk_tp_parse(text, n, file, &root, err))
		return err->code;
	return from_tree(&root, file, c, err);
}

int tfk_monitoring_config_load(const char *path,
			       struct tfk_monitoring_config *c,
			       struct tfk_err *err)
{
	struct tfk_tp_node root;

	defaults(c);
	if (tfk_tp_parse_file(path, &root, err))
		return err->code;
	return from_tree(&root, path, c, err);
}
