/*
 * callback.c - Keras' fit callbacks (see callback.h).
 *
 * One struct per callback with a kind tag and a switch per event: six
 * kinds do not earn a vtable. The decision rules (when a value counts
 * as an improvement, when patience runs out, in which order wait and
 * cooldown change) follow tf.keras 2.11+ callbacks.py line by line,
 * including its quirks (EarlyStopping never stops at epoch 0; "auto"
 * mode is decided from the monitor's name, differently per callback),
 * because a user moving a spec between Keras and tfk-train must see
 * the same epochs stop and the same rates fall.
 */
#include "nn/callback.h"

#include "format/events.h"
#include "nn/ckpt.h"
#include "util/alloc.h"
#include "util/buf.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum kind { CB_CKPT, CB_EARLY, CB_SCHED, CB_PLATEAU, CB_CSV, CB_TB };

static const char *const kind_name[] = {
	"ModelCheckpoint", "EarlyStopping", "LearningRateScheduler",
	"ReduceLROnPlateau", "CSVLogger", "TensorBoard"
};

struct cb {
	enum kind kind;
	char *path;		/* "spec.json: fit.callbacks[2]" */
	int verbose;
	/* monitor (checkpoint, early stopping, plateau) */
	char monitor[64];
	char mode[8];
	int greater;		/* resolved mode: 1 max, 0 min */
	double min_delta;
	long patience;
	double best;		/* +-INFINITY: none yet */
	long wait;
	/* ModelCheckpoint */
	char *filepath;
	int save_best_only;
	/* EarlyStopping */
	int has_baseline;
	double baseline;
	int restore_best;
	long start_from;
	int64_t best_epoch, stopped_epoch;
	void **best_w;		/* per variable copy of the data */
	/* LearningRateScheduler */
	int n_bounds;
	int64_t *bounds;
	double *values;
	/* ReduceLROnPlateau */
	double factor, min_lr;
	long cooldown, cooldown_counter;
	/* CSVLogger */
	char *filename;
	char sep;
	int append;
	FILE *f;
	int n_keys;
	char (*keys)[64];
	/* TensorBoard */
	char *log_dir;
	long hist_freq;
	long update_freq;	/* 0: "epoch" */
	struct tfk_events *ev_train, *ev_val;
};

struct tfk_callbacks {
	int n;
	struct cb *v;
};

/* Logs ------------------------------------------------------------------ */

void tfk_logs_clear(struct tfk_logs *l)
{
	l->n = 0;
}

void tfk_logs_set(struct tfk_logs *l, const char *key, double v)
{
	for (int i = 0; i < l->n; i++)
		if (!strcmp(l->key[i], key)) {
			l->val[i] = v;
			return;
		}
	if (l->n == TFK_LOGS_MAX)
		return;
	snprintf(l->key[l->n], sizeof(l->key[0]), "%s", key);
	l->val[l->n++] = v;
}

int tfk_logs_get(const struct tfk_logs *l, const char *key, double *v)
{
	for (int i = 0; i < l->n; i++)
		if (!strcmp(l->key[i], key)) {
			*v = l->val[i];
			return 1;
		}
	return 0;
}

/* Python's repr of a float: shortest round-trip digits; fixed notation
 * when -4 < decpt <= 16 (decpt: the decimal point after that many
 * digits), else d.ddde+XX; ".0" added to integral fixed values. */
char *tfk_py_repr(double v, char *buf)
{
	char s[40], dig[24];
	int p, nd = 0, e, decpt, i;
	char *o = buf;

	if (isnan(v))
		return strcpy(buf, "nan");
	if (isinf(v))
		return strcpy(buf, v < 0 ? "-inf" : "inf");
	if (v == 0)
		return strcpy(buf, signbit(v) ? "-0.0" : "0.0");
	for (p = 0; p < 17; p++) {
		snprintf(s, sizeof(s), "%.*e", p, v);
		if (strtod(s, NULL) == v)
			break;
	}
	snprintf(s, sizeof(s), "%.*e", p, v);
	for (char *q = s; *q && *q != 'e'; q++)
		if (*q >= '0' && *q <= '9')
			dig[nd++] = *q;
	while (nd > 1 && dig[nd - 1] == '0')
		nd--;
	dig[nd] = '\0';
	e = atoi(strchr(s, 'e') + 1);
	decpt = e + 1;
	if (v < 0)
		*o++ = '-';
	if (decpt > -4 && decpt <= 16) {
		if (decpt <= 0) {
			*o++ = '0';
			*o++ = '.';
			for (i = 0; i < -decpt; i++)
				*o++ = '0';
			memcpy(o, dig, nd);
			o += nd;
		} else {
			for (i = 0; i < decpt; i++)
				*o++ = i < nd ? dig[i] : '0';
			*o++ = '.';
			if (nd > decpt) {
				memcpy(o, dig + decpt, nd - decpt);
				o += nd - decpt;
			} else {
				*o++ = '0';
			}
		}
		*o = '\0';
	} else {
		*o++ = dig[0];
		if (nd > 1) {
			*o++ = '.';
			memcpy(o, dig + 1, nd - 1);
			o += nd - 1;
		}
		sprintf(o, "e%c%02d", e < 0 ? '-' : '+', abs(e));
	}
	return buf;
}

/* Parsing --------------------------------------------------------------- */

static int bad(struct tfk_err *err, const struct cb *c, const char *key,
	       const char *what)
{
	return tfk_errf(err, TFK_EINVAL, "%s.config.%s: %s", c->path, key,
			what);
}

static int get_num(const json_t *v, double *x)
{
	if (!json_is_number(v))
		return -1;
	*x = json_number_value(v);
	return isfinite(*x) ? 0 : -1;
}

static int get_long(const json_t *v, long lo, long *x)
{
	if (!json_is_integer(v) || json_integer_value(v) < lo)
		return -1;
	*x = (long)json_integer_value(v);
	return 0;
}

static int get_bool(const json_t *v, int *x)
{
	if (!json_is_boolean(v))
		return -1;
	*x = json_is_true(v);
	return 0;
}

/* verbose is an int in Keras (0/1), also "auto"; accept a bool too. */
static int get_verbose(const json_t *v, int *x)
{
	if (json_is_boolean(v)) {
		*x = json_is_true(v);
		return 0;
	}
	if (json_is_string(v) && !strcmp(json_string_value(v), "auto")) {
		*x = 1;
		return 0;
	}
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return -1;
	*x = (int)json_integer_value(v);
	return 0;
}

static int dup_str(const json_t *v, char **s)
{
	if (!json_is_string(v) || !*json_string_value(v))
		return -1;
	tfk_free(*s);
	*s = tfk_strdup(json_string_value(v));
	return *s ? 0 : -2;
}

/* A path-valued key: *s := a copy of v's non-empty string. */
static int path_key(const struct cb *c, const char *k, const json_t *v,
		    char **s, struct tfk_err *err)
{
	int rc = dup_str(v, s);

	if (rc == -2)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	if (rc)
		return bad(err, c, k, "expected a path");
	return 0;
}

/* Keys shared by the monitoring callbacks. 1: handled, 0: not a common
 * key, <0 error. */
static int parse_monitor_key(struct cb *c, const char *k, const json_t *v,
			     struct tfk_err *err)
{
	if (!strcmp(k, "monitor")) {
		if (!json_is_string(v) || !*json_string_value(v) ||
		    strlen(json_string_value(v)) >= sizeof(c->monitor))
			return bad(err, c, k, "expected a log key such as "
				   "\"val_loss\"");
		strcpy(c->monitor, json_string_value(v));
		return 1;
	}
	if (!strcmp(k, "mode")) {
		const char *s = json_is_string(v) ? json_string_value(v) : "";

		if (strcmp(s, "auto") && strcmp(s, "min") && strcmp(s, "max"))
			return bad(err, c, k, "expected \"auto\", \"min\" or "
				   "\"max\"");
		strcpy(c->mode, s);
		return 1;
	}
	if (!strcmp(k, "verbose")) {
		if (get_verbose(v, &c->verbose))
			return bad(err, c, k, "expected 0 or 1");
		return 1;
	}
	return 0;
}

static int parse_one(struct cb *c, const json_t *conf, struct tfk_err *err)
{
	const char *k;
	json_t *v;
	int rc;

	strcpy(c->monitor, "val_loss");
	strcpy(c->mode, "auto");
	c->sep = ',';
	switch (c->kind) {
	case CB_EARLY:
		c->min_delta = 0;
		c->patience = 0;
		break;
	case CB_PLATEAU:
		c->factor = 0.1;
		c->patience = 10;
		c->min_delta = 1e-4;
		break;
	case CB_TB:
		c->log_dir = tfk_strdup("logs");
		if (!c->log_dir)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		break;
	default:
		break;
	}
	c->best = NAN;
	json_object_foreach((json_t *)conf, k, v) {
		if (!strcmp(k, "name") || !strcmp(k, "trainable") ||
		    !strcmp(k, "dtype"))
			continue;
		if (c->kind == CB_CKPT || c->kind == CB_EARLY ||
		    c->kind == CB_PLATEAU) {
			rc = parse_monitor_key(c, k, v, err);
			if (rc < 0)
				return rc;
			if (rc)
				continue;
		} else if (!strcmp(k, "verbose") &&
			   (c->kind == CB_SCHED)) {
			if (get_verbose(v, &c->verbose))
				return bad(err, c, k, "expected 0 or 1");
			continue;
		}
		switch (c->kind) {
		case CB_CKPT:
			if (!strcmp(k, "filepath")) {
				if ((rc = path_key(c, k, v, &c->filepath, err)))
					return rc;
				continue;
			}
			if (!strcmp(k, "save_best_only")) {
				if (get_bool(v, &c->save_best_only))
					return bad(err, c, k, "expected true "
						   "or false");
				continue;
			}
			if (!strcmp(k, "save_weights_only")) {
				int b;

				if (get_bool(v, &b))
					return bad(err, c, k, "expected true "
						   "or false");
				continue;
			}
			if (!strcmp(k, "save_freq")) {
				if (!json_is_string(v) ||
				    strcmp(json_string_value(v), "epoch"))
					return bad(err, c, k, "only \"epoch\" "
						   "is supported");
				continue;
			}
			if (!strcmp(k, "initial_value_threshold")) {
				if (json_is_null(v))
					continue;
				if (get_num(v, &c->best))
					return bad(err, c, k, "expected a "
						   "number");
				continue;
			}
			if (!strcmp(k, "options") && json_is_null(v))
				continue;
			break;
		case CB_EARLY:
			if (!strcmp(k, "min_delta")) {
				if (get_num(v, &c->min_delta))
					return bad(err, c, k, "expected a "
						   "number");
				continue;
			}
			if (!strcmp(k, "patience")) {
				if (get_long(v, 0, &c->patience))
					return bad(err, c, k, "expected a "
						   "non-negative integer");
				continue;
			}
			if (!strcmp(k, "baseline")) {
				if (json_is_null(v))
					continue;
				if (get_num(v, &c->baseline))
					return bad(err, c, k, "expected a "
						   "number or null");
				c->has_baseline = 1;
				continue;
			}
			if (!strcmp(k, "restore_best_weights")) {
				if (get_bool(v, &c->restore_best))
					return bad(err, c, k, "expected true "
						   "or false");
				continue;
			}
			if (!strcmp(k, "start_from_epoch")) {
				if (get_long(v, 0, &c->start_from))
					return bad(err, c, k, "expected a "
						   "non-negative integer");
				continue;
			}
			break;
		case CB_SCHED:
			if (!strcmp(k, "boundaries")) {
				size_t i, n = json_array_size(v);

				if (!json_is_array(v) || n > 1000)
					return bad(err, c, k, "expected a list "
						   "of increasing epochs");
				tfk_free(c->bounds);
				c->bounds = tfk_calloc(n + 1,
						       sizeof(*c->bounds));
				if (!c->bounds)
					return tfk_errf(err, TFK_ENOMEM,
							"out of memory");
				for (i = 0; i < n; i++) {
					json_t *e = json_array_get(v, i);

					if (!json_is_integer(e) ||
					    json_integer_value(e) < 1 ||
					    (i && json_integer_value(e) <=
					     c->bounds[i - 1]))
						return bad(err, c, k, "expected "
							   "a list of "
							   "increasing epochs "
							   "> 0");
					c->bounds[i] = json_integer_value(e);
				}
				c->n_bounds = (int)n;
				continue;
			}
			if (!strcmp(k, "values")) {
				size_t i, n = json_array_size(v);

				if (!json_is_array(v) || !n || n > 1001)
					return bad(err, c, k, "expected a list "
						   "of learning rates");
				tfk_free(c->values);
				c->values = tfk_calloc(n + 1,
						       sizeof(*c->values));
				if (!c->values)
					return tfk_errf(err, TFK_ENOMEM,
							"out of memory");
				for (i = 0; i < n; i++)
					if (get_num(json_array_get(v, i),
						    &c->values[i]) ||
					    c->values[i] < 0)
						return bad(err, c, k, "expected "
							   "a list of learning "
							   "rates");
				/* count checked after the loop */
				c->cooldown = (long)n;
				continue;
			}
			break;
		case CB_PLATEAU:
			if (!strcmp(k, "factor")) {
				if (get_num(v, &c->factor) || c->factor >= 1 ||
				    c->factor < 0)
					return bad(err, c, k, "expected a "
						   "number in [0, 1) (Keras "
						   "refuses a factor >= 1.0)");
				continue;
			}
			if (!strcmp(k, "patience")) {
				if (get_long(v, 0, &c->patience))
					return bad(err, c, k, "expected a "
						   "non-negative integer");
				continue;
			}
			if (!strcmp(k, "min_delta") || !strcmp(k, "epsilon")) {
				if (get_num(v, &c->min_delta))
					return bad(err, c, k, "expected a "
						   "number");
				continue;
			}
			if (!strcmp(k, "cooldown")) {
				if (get_long(v, 0, &c->cooldown))
					return bad(err, c, k, "expected a "
						   "non-negative integer");
				continue;
			}
			if (!strcmp(k, "min_lr")) {
				if (get_num(v, &c->min_lr) || c->min_lr < 0)
					return bad(err, c, k, "expected a "
						   "number >= 0");
				continue;
			}
			break;
		case CB_CSV:
			if (!strcmp(k, "filename")) {
				if ((rc = path_key(c, k, v, &c->filename, err)))
					return rc;
				continue;
			}
			if (!strcmp(k, "separator")) {
				if (!json_is_string(v) ||
				    strlen(json_string_value(v)) != 1)
					return bad(err, c, k, "expected one "
						   "character");
				c->sep = json_string_value(v)[0];
				continue;
			}
			if (!strcmp(k, "append")) {
				if (get_bool(v, &c->append))
					return bad(err, c, k, "expected true "
						   "or false");
				continue;
			}
			break;
		case CB_TB:
			if (!strcmp(k, "log_dir")) {
				if ((rc = path_key(c, k, v, &c->log_dir, err)))
					return rc;
				continue;
			}
			if (!strcmp(k, "histogram_freq")) {
				if (get_long(v, 0, &c->hist_freq))
					return bad(err, c, k, "expected a "
						   "non-negative integer");
				continue;
			}
			if (!strcmp(k, "update_freq")) {
				if (json_is_string(v) &&
				    !strcmp(json_string_value(v), "epoch")) {
					c->update_freq = 0;
					continue;
				}
				if (json_is_string(v) &&
				    !strcmp(json_string_value(v), "batch")) {
					c->update_freq = 1;
					continue;
				}
				if (get_long(v, 1, &c->update_freq))
					return bad(err, c, k, "expected "
						   "\"epoch\", \"batch\" or a "
						   "positive integer");
				continue;
			}
			if (!strcmp(k, "write_graph") ||
			    !strcmp(k, "write_images") ||
			    !strcmp(k, "write_steps_per_second") ||
			    !strcmp(k, "profile_batch") ||
			    !strcmp(k, "embeddings_freq") ||
			    !strcmp(k, "embeddings_metadata"))
				continue;
			break;
		}
		return tfk_errf(err, TFK_EINVAL, "%s.config.%s: unknown key "
				"for %s", c->path, k, kind_name[c->kind]);
	}
	if (c->kind == CB_CKPT) {
		size_t n;

		if (!c->filepath)
			return tfk_errf(err, TFK_EINVAL, "%s.config.filepath: "
					"required", c->path);
		n = strlen(c->filepath);
		if ((n > 3 && !strcmp(c->filepath + n - 3, ".h5")) ||
		    (n > 6 && !strcmp(c->filepath + n - 6, ".keras")))
			return bad(err, c, "filepath", "HDF5 and .keras files "
				   "are not written; give a path without that "
				   "extension (TF checkpoint format)");
	}
	if (c->kind == CB_CSV && !c->filename)
		return tfk_errf(err, TFK_EINVAL, "%s.config.filename: required",
				c->path);
	if (c->kind == CB_SCHED) {
		if (!c->values)
			return tfk_errf(err, TFK_EINVAL, "%s.config.values: "
					"required", c->path);
		if (c->cooldown != c->n_bounds + 1)
			return bad(err, c, "values", "expected one more value "
				   "than boundaries");
		c->cooldown = 0;
	}
	return 0;
}

static void free_one(struct cb *c, struct tfk_graph *g)
{
	tfk_free(c->path);
	tfk_free(c->filepath);
	tfk_free(c->bounds);
	tfk_free(c->values);
	tfk_free(c->filename);
	tfk_free(c->log_dir);
	tfk_free(c->keys);
	if (c->f)
		fclose(c->f);
	tfk_events_close(c->ev_train, NULL);
	tfk_events_close(c->ev_val, NULL);
	if (c->best_w) {
		for (int i = 0; c->best_w[i]; i++)
			tfk_free(c->best_w[i]);
		tfk_free(c->best_w);
	}
	(void)g;
}

void tfk_callbacks_free(struct tfk_callbacks *cbs)
{
	if (!cbs)
		return;
	for (int i = 0; i < cbs->n; i++)
		free_one(&cbs->v[i], NULL);
	tfk_free(cbs->v);
	tfk_free(cbs);
}

static struct cb *add(struct tfk_callbacks *cbs, enum kind kind,
		      const char *path)
{
	struct cb *v = tfk_realloc(cbs->v, (size_t)(cbs->n + 1) * sizeof(*v));

	if (!v)
		return NULL;
	cbs->v = v;
	memset(&v[cbs->n], 0, sizeof(*v));
	v[cbs->n].kind = kind;
	v[cbs->n].path = tfk_strdup(path);
	if (!v[cbs->n].path)
		return NULL;
	return &v[cbs->n++];
}

int tfk_callbacks_new(const json_t *list, const char *path,
		      struct tfk_callbacks **cbs, struct tfk_err *err)
{
	struct tfk_callbacks *c = tfk_calloc(1, sizeof(*c));
	size_t i;
	int rc = 0;

	*cbs = NULL;
	if (!c)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	if (list && !json_is_null(list) && !json_is_array(list)) {
		tfk_callbacks_free(c);
		return tfk_errf(err, TFK_EINVAL, "%s: expected a list of "
				"callbacks", path);
	}
	for (i = 0; list && i < json_array_size(list); i++) {
		json_t *e = json_array_get(list, i), *cn, *conf;
		char p[512];
		int k;
		struct cb *cb;

		snprintf(p, sizeof(p), "%s[%zu]", path, i);
		cn = json_object_get(e, "class_name");
		conf = json_object_get(e, "config");
		if (!json_is_object(e) || !json_is_string(cn)) {
			rc = tfk_errf(err, TFK_EINVAL, "%s: expected "
				      "{\"class_name\": ..., \"config\": ...}",
				      p);
			break;
		}
		for (k = 0; k < 6; k++)
			if (!strcmp(json_string_value(cn), kind_name[k]))
				break;
		if (k == 6) {
			rc = tfk_errf(err, TFK_EINVAL, "%s.class_name: unknown "
				      "callback '%s'", p,
				      json_string_value(cn));
			break;
		}
		{
			const char *key;
			json_t *val;

			json_object_foreach(e, key, val)
				if (strcmp(key, "class_name") &&
				    strcmp(key, "config") &&
				    strcmp(key, "module") &&
				    strcmp(key, "registered_name"))
					break;
			if (key) {
				rc = tfk_errf(err, TFK_EINVAL, "%s.%s: unknown "
					      "key", p, key);
				break;
			}
		}
		if (conf && !json_is_object(conf)) {
			rc = tfk_errf(err, TFK_EINVAL, "%s.config: expected an "
				      "object", p);
			break;
		}
		cb = add(c, (enum kind)k, p);
		if (!cb) {
			rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
			break;
		}
		if (conf) {
			rc = parse_one(cb, conf, err);
		} else {
			json_t *empty = json_object();

			rc = empty ? parse_one(cb, empty, err) :
				tfk_errf(err, TFK_ENOMEM, "out of memory");
			json_decref(empty);
		}
		if (rc)
			break;
	}
	if (rc) {
		tfk_callbacks_free(c);
		return rc;
	}
	*cbs = c;
	return 0;
}

int tfk_callbacks_logdir(struct tfk_callbacks *cbs, const char *dir,
			 int histograms, struct tfk_err *err)
{
	struct cb *c = NULL;
	char *d;

	for (int i = 0; i < cbs->n; i++)
		if (cbs->v[i].kind == CB_TB)
			c = &cbs->v[i];
	if (!c) {
		c = add(cbs, CB_TB, "--logdir");
		if (!c)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	d = tfk_strdup(dir);
	if (!d)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	tfk_free(c->log_dir);
	c->log_dir = d;
	if (histograms && !c->hist_freq)
		c->hist_freq = 1;
	return 0;
}

/* Train begin ------------------------------------------------------------ */

static int check_monitor(struct cb *c, const char *const *keys, int n,
			 struct tfk_err *err)
{
	struct tfk_buf b;
	int i;

	if (!strcmp(c->monitor, "lr") || !strcmp(c->monitor, "learning_rate"))
		return 0;
	for (i = 0; i < n; i++)
		if (!strcmp(keys[i], c->monitor))
			return 0;
	tfk_buf_init(&b);
	for (i = 0; i < n; i++) {
		if (i)
			tfk_buf_adds(&b, ", ");
		tfk_buf_adds(&b, keys[i]);
	}
	tfk_buf_addc(&b, '\0');
	tfk_errf(err, TFK_EINVAL, "%s.config.monitor: '%s' is not logged by "
		 "this run (logs: %s)%s", c->path, c->monitor,
		 b.oom ? "?" : (char *)b.data,
		 !strncmp(c->monitor, "val_", 4) ? "; validation needs --val "
		 "or fit.validation_split" : "");
	tfk_buf_release(&b);
	return TFK_EINVAL;
}

static double wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int tb_open(struct cb *c, struct tfk_cb_env *env, int has_val,
		   struct tfk_err *err)
{
	size_t n = strlen(c->log_dir) + 16;
	char *d = tfk_malloc(n);
	double t = wall();
	int rc;

	if (!d)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	snprintf(d, n, "%s/train", c->log_dir);
	rc = tfk_events_open(&c->ev_train, d, t, err);
	if (!rc && has_val) {
		snprintf(d, n, "%s/validation", c->log_dir);
		rc = tfk_events_open(&c->ev_val, d, t, err);
	}
	tfk_free(d);
	if (!rc && env->n_hparams) {
		struct tfk_events *ev = NULL;

		rc = tfk_events_open(&ev, c->log_dir, t, err);
		if (!rc)
			rc = tfk_events_hparams(ev, t, env->hparams,
						env->n_hparams, err);
		if (!rc)
			rc = tfk_events_close(ev, err);
		else
			tfk_events_close(ev, NULL);
	}
	return rc;
}

int tfk_callbacks_train_begin(struct tfk_callbacks *cbs,
			      struct tfk_cb_env *env, const char *const *keys,
			      int n, struct tfk_err *err)
{
	int has_val = 0, i, rc;

	for (i = 0; i < n; i++)
		if (!strncmp(keys[i], "val_", 4))
			has_val = 1;
	for (i = 0; i < cbs->n; i++) {
		struct cb *c = &cbs->v[i];
		const char *m = c->monitor;
		size_t ml = strlen(m);

		switch (c->kind) {
		case CB_CKPT:
			if (c->save_best_only &&
			    (rc = check_monitor(c, keys, n, err)))
				return rc;
			c->greater = !strcmp(c->mode, "max") ||
				(!strcmp(c->mode, "auto") &&
				 (strstr(m, "acc") ||
				  !strncmp(m, "fmeasure", 8)));
			if (isnan(c->best))
				c->best = c->greater ? -INFINITY : INFINITY;
			break;
		case CB_EARLY:
			if ((rc = check_monitor(c, keys, n, err)))
				return rc;
			c->greater = !strcmp(c->mode, "max") ||
				(!strcmp(c->mode, "auto") &&
				 ((ml >= 3 && !strcmp(m + ml - 3, "acc")) ||
				  (ml >= 8 && !strcmp(m + ml - 8, "accuracy")) ||
				  (ml >= 3 && !strcmp(m + ml - 3, "auc"))));
			c->min_delta = fabs(c->min_delta) *
				(c->greater ? 1 : -1);
			if (isnan(c->best))
				c->best = c->greater ? -INFINITY : INFINITY;
			if (c->restore_best && !c->best_w) {
				int nv = tfk_graph_n_variables(env->g);

				c->best_w = tfk_calloc((size_t)nv + 1,
						       sizeof(void *));
				if (!c->best_w)
					return tfk_errf(err, TFK_ENOMEM,
							"out of memory");
			}
			break;
		case CB_PLATEAU:
			if ((rc = check_monitor(c, keys, n, err)))
				return rc;
			c->greater = !(!strcmp(c->mode, "min") ||
				       (!strcmp(c->mode, "auto") &&
					!strstr(m, "acc")));
			if (isnan(c->best))
				c->best = c->greater ? -INFINITY : INFINITY;
			break;
		case CB_CSV: {
			int exists = 0;
			long sz = 0;
			FILE *f = fopen(c->filename, "r");

			if (f) {
				exists = 1;
				fseek(f, 0, SEEK_END);
				sz = ftell(f);
				fclose(f);
			}
			c->f = fopen(c->filename,
				     (c->append || env->resumed) ? "a" : "w");
			if (!c->f)
				return tfk_errf(err, TFK_EIO, "%s: %s",
						c->filename, strerror(errno));
			/* Keras writes the header unless appending to a
			 * file that has lines already. */
			c->n_keys = (c->append || env->resumed) &&
				exists && sz > 0 ? -1 : 0;
			break;
		}
		case CB_TB:
			if ((rc = tb_open(c, env, has_val, err)))
				return rc;
			break;
		case CB_SCHED:
			break;
		}
	}
	return 0;
}

/* Events ------------------------------------------------------------------ */

int tfk_callbacks_epoch_begin(struct tfk_callbacks *cbs,
			      struct tfk_cb_env *env, int64_t epoch,
			      struct tfk_err *err)
{
	for (int i = 0; i < cbs->n; i++) {
		struct cb *c = &cbs->v[i];
		int k = 0;
		double lr;

		if (c->kind != CB_SCHED)
			continue;
		while (k < c->n_bounds && epoch >= c->bounds[k])
			k++;
		/* Keras keeps the rate in a float32 variable. */
		lr = (double)(float)c->values[k];
		tfk_optim_set_lr(env->opt, lr);
		env->lr_set = 1;
		env->lr = lr;
		if (c->verbose && env->note) {
			char m[128], r[32];

			snprintf(m, sizeof(m), "Epoch %lld: "
				 "LearningRateScheduler setting learning rate "
				 "to %s.", (long long)epoch + 1,
				 tfk_py_repr(lr, r));
			env->note(env->ctx, m);
		}
	}
	(void)err;
	return 0;
}

int tfk_callbacks_batch_end(struct tfk_callbacks *cbs,
			    struct tfk_cb_env *env, int64_t step,
			    const struct tfk_logs *logs, struct tfk_err *err)
{
	for (int i = 0; i < cbs->n; i++) {
		struct cb *c = &cbs->v[i];
		double t;
		int rc;

		if (c->kind != CB_TB || !c->update_freq ||
		    step % c->update_freq)
			continue;
		t = wall();
		for (int k = 0; k < logs->n; k++) {
			char tag[80];

			snprintf(tag, sizeof(tag), "batch_%s", logs->key[k]);
			rc = tfk_events_scalar(c->ev_train, t, step, tag,
					       logs->val[k], err);
			if (rc)
				return rc;
		}
		rc = tfk_events_flush(c->ev_train, err);
		if (rc)
			return rc;
	}
	(void)env;
	return 0;
}

static int copy_weights(struct tfk_graph *g, void **w, int save)
{
	int nv = tfk_graph_n_variables(g);

	for (int i = 0; i < nv; i++) {
		struct tfk_tensor *t = tfk_graph_var_at(g, i, NULL);

		if (save) {
			if (!w[i] && !(w[i] = tfk_malloc(t->nbytes + 1)))
				return TFK_ENOMEM;
			memcpy(w[i], t->data, t->nbytes);
		} else if (w[i]) {
			memcpy(t->data, w[i], t->nbytes);
		}
	}
	return 0;
}

/* "{epoch:02d}" / "{val_loss:.4f}" / "{loss}" in Python format syntax. */
static int format_path(const char *fmt, int64_t epoch,
		       const struct tfk_logs *logs, struct tfk_buf *b,
		       const struct cb *c, struct tfk_err *err)
{
	const char *p = fmt;

	while (*p) {
		const char *q, *colon;
		char name[64], spec[32], cfmt[40], r[40];
		double v;
		size_t nl;

		if (*p != '{') {
			if (*p == '}' && p[1] == '}')
				p++;
			tfk_buf_addc(b, *p++);
			continue;
		}
		if (p[1] == '{') {
			tfk_buf_addc(b, '{');
			p += 2;
			continue;
		}
		q = strchr(p, '}');
		if (!q)
			return bad(err, c, "filepath", "unmatched '{'");
		colon = memchr(p, ':', q - p);
		nl = (size_t)((colon ? colon : q) - p - 1);
		if (nl >= sizeof(name) || (colon && (size_t)(q - colon) >=
					   sizeof(spec) - 1))
			return bad(err, c, "filepath", "field too long");
		memcpy(name, p + 1, nl);
		name[nl] = '\0';
		spec[0] = '\0';
		if (colon) {
			memcpy(spec, colon + 1, q - colon - 1);
			spec[q - colon - 1] = '\0';
		}
		if (!strcmp(name, "epoch")) {
			v = (double)(epoch + 1);
		} else if (!tfk_logs_get(logs, name, &v)) {
			return tfk_errf(err, TFK_EINVAL, "%s.config.filepath: "
					"no log key '%s'", c->path, name);
		}
		if (!spec[0]) {
			if (!strcmp(name, "epoch"))
				tfk_buf_addf(b, "%lld", (long long)(epoch + 1));
			else
				tfk_buf_adds(b, tfk_py_repr(v, r));
		} else {
			char conv = spec[strlen(spec) - 1];

			if (strspn(spec, "0123456789.") != strlen(spec) - 1 ||
			    !strchr("dfeg", conv))
				return bad(err, c, "filepath", "unsupported "
					   "format spec (use d, f, e or g)");
			snprintf(cfmt, sizeof(cfmt), "%%%.*s%s",
				 (int)strlen(spec) - 1, spec,
				 conv == 'd' ? "lld" : (char[]){ conv, 0 });
			if (conv == 'd')
				tfk_buf_addf(b, cfmt, (long long)v);
			else
				tfk_buf_addf(b, cfmt, v);
		}
		p = q + 1;
	}
	tfk_buf_addc(b, '\0');
	return b->oom ? tfk_errf(err, TFK_ENOMEM, "out of memory") : 0;
}

static void note(struct tfk_cb_env *env, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void note(struct tfk_cb_env *env, const char *fmt, ...)
{
	char m[768];
	va_list ap;

	if (!env->note)
		return;
	va_start(ap, fmt);
	vsnprintf(m, sizeof(m), fmt, ap);
	va_end(ap);
	env->note(env->ctx, m);
}

static int csv_row(struct cb *c, int64_t epoch, const struct tfk_logs *l,
		   struct tfk_err *err)
{
	char r[40];
	int i, j;

	if (c->n_keys <= 0) {
		int header = c->n_keys == 0;

		tfk_free(c->keys);
		c->keys = tfk_calloc((size_t)l->n + 1, sizeof(*c->keys));
		if (!c->keys)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		for (i = 0; i < l->n; i++)
			strcpy(c->keys[i], l->key[i]);
		c->n_keys = l->n;
		qsort(c->keys, (size_t)l->n, sizeof(*c->keys),
		      (int (*)(const void *, const void *))strcmp);
		if (header) {
			fputs("epoch", c->f);
			for (i = 0; i < c->n_keys; i++)
				fprintf(c->f, "%c%s", c->sep, c->keys[i]);
			fputs("\r\n", c->f);
		}
	}
	fprintf(c->f, "%lld", (long long)epoch);
	for (i = 0; i < c->n_keys; i++) {
		double v;

		for (j = 0; j < l->n; j++)
			if (!strcmp(l->key[j], c->keys[i]))
				break;
		if (j < l->n && tfk_logs_get(l, c->keys[i], &v))
			fprintf(c->f, "%c%s", c->sep, tfk_py_repr(v, r));
		else
			fprintf(c->f, "%cNA", c->sep);
	}
	fputs("\r\n", c->f);
	if (fflush(c->f) || ferror(c->f))
		return tfk_errf(err, TFK_EIO, "%s: %s", c->filename,
				strerror(errno));
	return 0;
}

static int tb_epoch(struct cb *c, struct tfk_cb_env *env, int64_t epoch,
		    const struct tfk_logs *l, struct tfk_err *err)
{
	double t = wall();
	int rc = 0;

	for (int i = 0; i < l->n && !rc; i++) {
		char tag[80];
		int val = !strncmp(l->key[i], "val_", 4);
		struct tfk_events *ev = val ? c->ev_val : c->ev_train;

		if (!ev)
			continue;
		snprintf(tag, sizeof(tag), "epoch_%s",
			 l->key[i] + (val ? 4 : 0));
		rc = tfk_events_scalar(ev, t, epoch, tag, l->val[i], err);
	}
	if (!rc && c->hist_freq && epoch % c->hist_freq == 0) {
		int nv = tfk_graph_n_variables(env->g);

		for (int i = 0; i < nv && !rc; i++) {
			const char *name;
			struct tfk_tensor *v = tfk_graph_var_at(env->g, i,
								&name);
			char tag[256];

			if (v->dtype != TFK_DT_FLOAT)
				continue;
			snprintf(tag, sizeof(tag), "%s_0", name);
			rc = tfk_events_histogram(c->ev_train, t, epoch, tag,
						  v->data,
						  (size_t)tfk_tensor_numel(v),
						  err);
		}
	}
	if (!rc)
		rc = tfk_events_flush(c->ev_train, err);
	if (!rc && c->ev_val)
		rc = tfk_events_flush(c->ev_val, err);
	return rc;
}

static int better(const struct cb *c, double cur, double ref)
{
	return c->greater ? cur > ref : cur < ref;
}

int tfk_callbacks_epoch_end(struct tfk_callbacks *cbs,
			    struct tfk_cb_env *env, int64_t epoch,
			    struct tfk_logs *logs, struct tfk_err *err)
{
	char r1[40], r2[40];
	int rc = 0;

	for (int i = 0; i < cbs->n && !rc; i++) {
		struct cb *c = &cbs->v[i];
		double cur = NAN;
		int have = c->kind != CB_CSV && c->kind != CB_TB &&
			tfk_logs_get(logs, c->monitor, &cur);

		switch (c->kind) {
		case CB_CKPT: {
			struct tfk_buf b;

			if (c->save_best_only && !(have && better(c, cur,
								  c->best))) {
				if (c->verbose)
					note(env, "Epoch %lld: %s did not "
					     "improve from %.5f",
					     (long long)epoch + 1, c->monitor,
					     c->best);
				break;
			}
			tfk_buf_init(&b);
			rc = format_path(c->filepath, epoch, logs, &b, c, err);
			if (!rc)
				rc = env->save(env->ctx, (char *)b.data, err);
			if (!rc && c->verbose) {
				if (c->save_best_only)
					note(env, "Epoch %lld: %s improved "
					     "from %.5f to %.5f, saving model "
					     "to %s", (long long)epoch + 1,
					     c->monitor, c->best, cur,
					     (char *)b.data);
				else
					note(env, "Epoch %lld: saving model "
					     "to %s", (long long)epoch + 1,
					     (char *)b.data);
			}
			if (!rc && c->save_best_only)
				c->best = cur;
			tfk_buf_release(&b);
			break;
		}
		case CB_EARLY:
			if (!have || epoch < c->start_from)
				break;
			if (c->restore_best && !c->best_w[0] &&
			    copy_weights(env->g, c->best_w, 1))
				return tfk_errf(err, TFK_ENOMEM,
						"out of memory");
			c->wait++;
			if (better(c, cur - c->min_delta, c->best)) {
				c->best = cur;
				c->best_epoch = epoch;
				if (c->restore_best &&
				    copy_weights(env->g, c->best_w, 1))
					return tfk_errf(err, TFK_ENOMEM,
							"out of memory");
				if (!c->has_baseline ||
				    better(c, cur - c->min_delta,
					   c->baseline))
					c->wait = 0;
				break;
			}
			if (c->wait >= c->patience && epoch > 0) {
				c->stopped_epoch = epoch;
				env->stop = 1;
				if (c->restore_best && c->best_w[0]) {
					if (c->verbose)
						note(env, "Restoring model "
						     "weights from the end of "
						     "the best epoch: %lld.",
						     (long long)c->best_epoch +
						     1);
					copy_weights(env->g, c->best_w, 0);
				}
			}
			break;
		case CB_SCHED:
			tfk_logs_set(logs, "lr",
				     (double)(float)tfk_optim_lr(env->opt));
			break;
		case CB_PLATEAU:
			tfk_logs_set(logs, "lr",
				     (double)(float)tfk_optim_lr(env->opt));
			if (!have && !strcmp(c->monitor, "lr"))
				have = tfk_logs_get(logs, "lr", &cur);
			if (!have)
				break;
			if (c->cooldown_counter > 0) {
				c->cooldown_counter--;
				c->wait = 0;
			}
			if (c->greater ? cur > c->best + c->min_delta :
			    cur < c->best - c->min_delta) {
				c->best = cur;
				c->wait = 0;
			} else if (c->cooldown_counter <= 0 &&
				   ++c->wait >= c->patience) {
				float old = (float)tfk_optim_lr(env->opt);

				if (old > (float)c->min_lr) {
					double nl = (double)old * c->factor;

					if (nl < c->min_lr)
						nl = c->min_lr;
					nl = (double)(float)nl;
					tfk_optim_set_lr(env->opt, nl);
					env->lr_set = 1;
					env->lr = nl;
					if (c->verbose)
						note(env, "Epoch %lld: "
						     "ReduceLROnPlateau "
						     "reducing learning rate "
						     "to %s.",
						     (long long)epoch + 1,
						     tfk_py_repr(nl, r1));
					c->cooldown_counter = c->cooldown;
					c->wait = 0;
				}
			}
			break;
		case CB_CSV:
			rc = csv_row(c, epoch, logs, err);
			break;
		case CB_TB:
			rc = tb_epoch(c, env, epoch, logs, err);
			break;
		}
	}
	(void)r2;
	return rc;
}

int tfk_callbacks_train_end(struct tfk_callbacks *cbs,
			    struct tfk_cb_env *env, struct tfk_err *err)
{
	int rc = 0;

	for (int i = 0; i < cbs->n; i++) {
		struct cb *c = &cbs->v[i];
		int r = 0;

		if (c->kind == CB_EARLY && c->stopped_epoch > 0 && c->verbose)
			note(env, "Epoch %lld: early stopping",
			     (long long)c->stopped_epoch + 1);
		if (c->kind == CB_CSV && c->f) {
			if (fclose(c->f))
				r = tfk_errf(err, TFK_EIO, "%s: %s",
					     c->filename, strerror(errno));
			c->f = NULL;
		}
		if (c->kind == CB_TB) {
			r = tfk_events_close(c->ev_train, err);
			c->ev_train = NULL;
			if (!r)
				r = tfk_events_close(c->ev_val, err);
			else
				tfk_events_close(c->ev_val, NULL);
			c->ev_val = NULL;
		}
		if (r && !rc)
			rc = r;
	}
	return rc;
}

/* State ------------------------------------------------------------------- */

static json_t *num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

json_t *tfk_callbacks_state(const struct tfk_callbacks *cbs)
{
	json_t *a = json_array();

	for (int i = 0; a && i < cbs->n; i++) {
		const struct cb *c = &cbs->v[i];
		json_t *o = json_object();

		if (!o) {
			json_decref(a);
			return NULL;
		}
		json_object_set_new(o, "class_name",
				    json_string(kind_name[c->kind]));
		json_object_set_new(o, "best", num_or_null(c->best));
		json_object_set_new(o, "wait", json_integer(c->wait));
		json_object_set_new(o, "cooldown_counter",
				    json_integer(c->cooldown_counter));
		json_object_set_new(o, "best_epoch",
				    json_integer(c->best_epoch));
		json_object_set_new(o, "stopped_epoch",
				    json_integer(c->stopped_epoch));
		json_array_append_new(a, o);
	}
	return a;
}

int tfk_callbacks_restore(struct tfk_callbacks *cbs, const json_t *state,
			  struct tfk_err *err)
{
	if (!json_is_array(state) || (int)json_array_size(state) != cbs->n)
		return tfk_errf(err, TFK_EINVAL, "checkpoint: callbacks: the "
				"spec's fit.callbacks differ from the "
				"checkpoint's");
	for (int i = 0; i < cbs->n; i++) {
		struct cb *c = &cbs->v[i];
		json_t *o = json_array_get(state, i);
		json_t *b = json_object_get(o, "best");
		const char *cn = json_string_value(json_object_get(o,
							"class_name"));

		if (!cn || strcmp(cn, kind_name[c->kind]))
			return tfk_errf(err, TFK_EINVAL, "checkpoint: "
					"callbacks[%d]: the spec has %s, the "
					"checkpoint %s", i,
					kind_name[c->kind], cn ? cn : "?");
		/* null best: none yet; train_begin sets +-inf. */
		c->best = json_is_number(b) ? json_number_value(b) : NAN;
		c->wait = (long)json_integer_value(json_object_get(o, "wait"));
		c->cooldown_counter = (long)json_integer_value(
			json_object_get(o, "cooldown_counter"));
		c->best_epoch = json_integer_value(json_object_get(o,
							"best_epoch"));
		c->stopped_epoch = json_integer_value(json_object_get(o,
							"stopped_epoch"));
	}
	return 0;
}
