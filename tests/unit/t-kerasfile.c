/*
 * t-kerasfile.c - Keras files (format/keras.h, nn/kerasfile.h) on our
 * own writes: a model's weights written as .keras and read back land in
 * a model built from another seed unchanged, LSTM cell weights under
 * cell/vars; the spec of the file alone has the compile settings; every
 * prefix of the archive is refused with a message naming the file, and
 * so are foreign bytes and a model of other shapes. (Keras itself reads
 * and writes these files in tests/tf/t-keras.py.)
 */
#include "tap.h"
#include "format/keras.h"
#include "graph/graph.h"
#include "nn/kerasfile.h"
#include "nn/model.h"

#include <stdlib.h>
#include <string.h>

static const char *model_json =
	"{\"class_name\": \"Sequential\", \"config\": {\"name\": \"s\", "
	"\"layers\": [{\"class_name\": \"InputLayer\", \"config\": "
	"{\"batch_input_shape\": [null, 3, 2], \"name\": \"x\"}}, "
	"{\"class_name\": \"LSTM\", \"config\": {\"name\": \"lstm\", "
	"\"units\": UNITS}}, {\"class_name\": \"Dense\", \"config\": "
	"{\"name\": \"dense\", \"units\": 2}}]}}";

static struct tfk_model *build(int units, uint64_t seed)
{
	char text[1024], *p;
	struct tfk_model *m = NULL;
	struct tfk_err err = { 0 };
	json_t *j;

	snprintf(text, sizeof(text), "%s", model_json);
	p = strstr(text, "UNITS");
	p[0] = (char)('0' + units);
	memmove(p + 1, p + 5, strlen(p + 5) + 1);
	j = json_loads(text, 0, NULL);
	if (tfk_keras_build(j, "m", seed, &m, &err))
		tap_diag("%s", err.msg);
	json_decref(j);
	return m;
}

static int same_vars(struct tfk_model *a, struct tfk_model *b)
{
	int n = tfk_graph_n_variables(a->g);

	for (int i = 0; i < n; i++) {
		struct tfk_tensor *x = tfk_graph_var_at(a->g, i, NULL),
				  *y = tfk_graph_var_at(b->g, i, NULL);

		if (x->nbytes != y->nbytes || memcmp(x->data, y->data,
						     x->nbytes))
			return 0;
	}
	return n > 0;
}

int main(void)
{
	struct tfk_model *a = build(4, 1), *b = build(4, 2), *c = build(3, 1);
	struct tfk_kerasfile *kf = NULL, *back = NULL;
	struct tfk_spec *spec = NULL;
	struct tfk_err err = { 0 };
	json_t *model = json_loads("{\"class_name\": \"Sequential\", "
				   "\"config\": {}}", 0, NULL),
	       *comp = json_loads("{\"optimizer\": \"adam\", \"loss\": "
				  "\"mse\"}", 0, NULL);
	const char *path = tap_tmp("m.keras");
	size_t n = 0;
	char *bytes;
	int refused = 0, named = 0;

	ok(a && b && c, "three models built");
	ok(!same_vars(a, b), "two seeds, two sets of weights");
	is_int(tfk_kerasfile_of_model(a, model, comp, &kf, &err), 0,
	       "the model's weights as Keras 3 layers");
	is_int(kf->n_layers, 2, "two layers with weights");
	is_str(kf->layers[0].w[1].name, "cell/vars/1",
	       "the LSTM's recurrent kernel under cell/vars/1");
	is_int(tfk_kerasfile_write(kf, path, &err), 0, "written: %s",
	       err.msg);
	is_int(tfk_kerasfile_read(&back, path, &err), 0, "read back: %s",
	       err.msg);
	is_int(tfk_kerasfile_apply(back, path, b, &err), 0, "applied: %s",
	       err.msg);
	ok(same_vars(a, b), "the other seed's model now has the weights");
	is_int(tfk_kerasfile_spec(back, path, &spec, &err), 0, "a spec");
	ok(spec && json_is_string(tfk_spec_get(spec, "compile.loss")),
	   "the spec has the compile settings");
	tfk_spec_free(spec);
	is_int(tfk_kerasfile_apply(back, path, c, &err), TFK_EINVAL,
	       "a model of other shapes is refused");
	ok(strstr(err.msg, "layer 'dense'") && strstr(err.msg, "[4, 2]") &&
	   strstr(err.msg, "[3, 2]"), "naming the layer and shapes: %s",
	   err.msg);
	bytes = tap_read_file(path, &n);
	for (size_t k = 0; bytes && k < n; k += 97) {
		struct tfk_kerasfile *t = NULL;

		if (tfk_kerasfile_parse(&t, "cut.keras", bytes, k, &err)) {
			refused++;
			named += !strncmp(err.msg, "cut.keras: ", 11);
		}
		tfk_kerasfile_free(t);
	}
	tap_diag("%zu bytes", n);
	ok(refused == (int)((n + 96) / 97) && named == refused,
	   "every prefix refused (%d), each message naming the file",
	   refused);
	tfk_kerasfile_free(back);
	is_int(tfk_kerasfile_parse(&back, "junk", "junk", 4, &err),
	       TFK_ECORRUPT, "foreign bytes refused");
	free(bytes);
	tfk_kerasfile_free(kf);
	tfk_model_free(a);
	tfk_model_free(b);
	tfk_model_free(c);
	json_decref(model);
	json_decref(comp);
	tap_rm_tmpdir();
	return tap_done();
}
