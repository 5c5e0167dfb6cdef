/*
 * t-modelconfig.c - the text format (util/textproto.h) and TF Serving's
 * model config file on it (model/modelconfig.h): the forms TF Serving's
 * documentation writes, list and map syntax, escapes, and the located
 * refusals.
 */
#include "model/modelconfig.h"
#include "util/textproto.h"
#include "tap.h"

#include <string.h>

static int parse(const char *text, struct tfk_server_config *c, char *msg)
{
	struct tfk_err err;
	int rc = tfk_server_config_parse(text, strlen(text), "m.config", c,
					 &err);

	msg[0] = 0;
	if (rc)
		strcpy(msg, err.msg);
	return rc;
}

static void refuses(const char *text, const char *want)
{
	struct tfk_server_config c;
	char msg[600];

	ok(parse(text, &c, msg) < 0, "refused: %s", want);
	is_str(msg, want, "message");
	ok(c.n_models == 0 && !c.models, "nothing left behind");
}

static void docs_example(void)
{
	/* TF Serving's serving_config page, as written there */
	static const char text[] =
		"model_config_list {\n"
		"  config {\n"
		"    name: 'my_first_model'\n"
		"    base_path: '/tmp/my_first_model/'\n"
		"    model_platform: 'tensorflow'\n"
		"  }\n"
		"  config {\n"
		"    name: 'my_second_model'\n"
		"    base_path: '/tmp/my_second_model/'\n"
		"    model_platform: 'tensorflow'\n"
		"    model_version_policy {\n"
		"      specific {\n"
		"        versions: 42\n"
		"        versions: 43\n"
		"      }\n"
		"    }\n"
		"    version_labels {\n"
		"      key: 'stable'\n"
		"      value: 42\n"
		"    }\n"
		"    version_labels {\n"
		"      key: 'canary'\n"
		"      value: 43\n"
		"    }\n"
		"  }\n"
		"}\n";
	struct tfk_server_config c;
	char msg[600];
	int64_t have[] = { 44, 43, 42, 41 };
	int want[4];

	is_int(parse(text, &c, msg), 0, "the documentation's config %s", msg);
	is_int(c.n_models, 2, "two models");
	is_str(c.models[0].name, "my_first_model", "name");
	is_str(c.models[0].base_path, "/tmp/my_first_model/", "base_path");
	is_int(c.models[0].policy, TFK_POLICY_LATEST, "latest by default");
	is_int(c.models[0].num_versions, 1, "one version by default");
	is_int(c.models[1].policy, TFK_POLICY_SPECIFIC, "specific");
	is_int(c.models[1].n_versions, 2, "two versions");
	is_int(c.models[1].versions[1], 43, "43");
	is_int(c.models[1].n_labels, 2, "two labels");
	is_str(c.models[1].labels[1].label, "canary", "label");
	is_int(c.models[1].labels[1].version, 43, "label's version");
	is_int(tfk_model_config_wanted(&c.models[1], have, 4, want), 2,
	       "specific wants two of four");
	ok(!want[0] && want[1] && want[2] && !want[3], "43 and 42");
	is_int(tfk_model_config_wanted(&c.models[0], have, 4, want), 1,
	       "latest wants one");
	ok(want[0] && !want[1], "the highest");
	tfk_server_config_free(&c);
}

static void other_forms(void)
{
	/* colons before messages, <>, lists, separators, comments,
	 * double quotes with escapes, adjacent strings, hex */
	static const char text[] =
		"# comment\n"
		"model_config_list: {\n"
		"  config: [{ name: \"a\\x41\\101\" base_path: \"/m/\" '\\'a';"
		" model_version_policy < all {} > },\n"
		"           { name: 'b', base_path: '/b'"
		"  model_version_policy { latest { num_versions: 0x3 } } }]\n"
		"  config { name: 'c' base_path: '/c' model_platform: 'tflite'"
		"    model_version_policy { specific { versions: [7, 5, 7] } }"
		"    version_labels: { key: 'x' value: 5 } }\n"
		"}";
	struct tfk_server_config c;
	char msg[600];
	int64_t have[] = { 9, 8, 7, 6, 5 };
	int want[5];

	is_int(parse(text, &c, msg), 0, "other forms %s", msg);
	is_int(c.n_models, 3, "three models");
	is_str(c.models[0].name, "aAA", "\\x41 and \\101");
	is_str(c.models[0].base_path, "/m/'a", "joined strings, \\'");
	is_int(c.models[0].policy, TFK_POLICY_ALL, "all");
	is_int(c.models[1].num_versions, 3, "0x3");
	is_int(c.models[2].n_versions, 2, "a repeated version counted once");
	is_int(tfk_model_config_wanted(&c.models[1], have, 5, want), 3,
	       "latest 3");
	ok(want[0] && want[1] && want[2] && !want[3], "the three highest");
	is_int(tfk_model_config_wanted(&c.models[0], have, 5, want), 5,
	       "all");
	tfk_server_config_free(&c);

	is_int(parse("", &c, msg), TFK_EINVAL, "empty");
	is_str(msg, "m.config: no model_config_list", "message");
	is_int(parse("model_config_list {}", &c, msg), 0, "no models");
	is_int(c.n_models, 0, "zero models");
	tfk_server_config_free(&c);
}

static void refusals(void)
{
	refuses("model_config_list { config { name: 'a' } }",
		"m.config:1:21: config 'a': base_path is required");
	refuses("model_config_list { config { base_path: '/a' } }",
		"m.config:1:21: config: name is required");
	refuses("model_config_list { config { name: 'a' base_path: '/a' "
		"foo: 1 } }",
		"m.config:1:56: unknown field 'foo' in config (known: name, "
		"base_path, model_platform, model_version_policy, "
		"version_labels)");
	refuses("model_config_list {\n config { name: 'a'\n",
		"m.config:3:1: the file ends inside a message (a '}' is "
		"missing)");
	refuses("model_config_list { config { name: 'a }",
		"m.config:1:36: a string is not closed before the end of the "
		"file");
	refuses("model_config_list { config { name 'a' } }",
		"m.config:1:35: expected ':' or '{' after 'name', found "
		"''a''");
	refuses("model_config_list { config { name: 7 base_path: '/a' } }",
		"m.config:1:30: field 'name': expected a quoted string");
	refuses("model_config_list { config { name: 'a' base_path: '/a' "
		"model_version_policy { latest { num_versions: -1 } } } }",
		"m.config:1:88: field 'num_versions': -1 is outside "
		"0..1000000");
	refuses("model_config_list { config { name: 'a' base_path: '/a' "
		"model_version_policy { specific { versions: 1 } } "
		"version_labels { key: 'l' value: 2 } } }",
		"m.config:1:21: config 'a': label 'l' names version 2, which "
		"the specific policy does not serve");
	refuses("model_config_list { config { name: 'a' base_path: '/a' } "
		"config { name: 'a' base_path: '/b' } }",
		"m.config:1:58: model 'a' configured twice");
	refuses("model_config_list { config { name: 'a/b' base_path: '/a' }"
		" }", "m.config:1:21: config 'a/b': a model name cannot hold "
		"'/' or ':'");
	refuses("model_config_list { config { name: 'a' base_path: '/a' "
		"model_platform: 'pytorch' } }",
		"m.config:1:21: config 'a': model_platform 'pytorch' is not "
		"served (tensorflow or tflite)");
	refuses("custom_model_config { [type.googleapis.com/x] {} }",
		"m.config:1:23: extension and Any fields ('[...]') are not "
		"read");
	refuses("model_config_list { [ext.x]: 1 }",
		"m.config:1:21: extension and Any fields ('[...]') are not "
		"read");
	refuses("model_config_list { config { name: '\\q' } }",
		"m.config:1:36: unknown escape in a string");
	refuses("model_config_list { config { name: '\\xff' base_path: '/a' "
		"} }", "m.config:1:30: field 'name': the string is not valid "
		"UTF-8");
	refuses("model_config_list { config: [{name: 'a' base_path: '/a'} "
		"{name: 'b'}] }",
		"m.config:1:58: expected ',' or ']' in the list of 'config', "
		"found '{'");
}

static void deep(void)
{
	char text[1000];
	struct tfk_tp_node root;
	struct tfk_err err;
	int i;

	for (i = 0; i < 70; i++)
		memcpy(text + 2 * i, "a{", 2);
	text[140] = 0;
	is_int(tfk_tp_parse(text, strlen(text), "d", &root, &err),
	       TFK_ECORRUPT, "nesting refused");
	is_str(err.msg, "d:1:130: messages nested more than 64 deep",
	       "message");
	/* a NUL in a string survives in the tree, refused as a string */
	is_int(tfk_tp_parse("s: 'a\\0b'", 9, "n", &root, &err), 0, "\\0");
	is_int(root.kids[0].value_len, 3, "three bytes");
	{
		const char *s;

		is_int(tfk_tp_string(&root.kids[0], "n", &s, &err),
		       TFK_EINVAL, "NUL refused");
		is_str(err.msg, "n:1:1: field 's': the string holds a NUL "
		       "byte", "message");
	}
	tfk_tp_free(&root);
	is_int(tfk_tp_parse("b: True c: 0 d: yes", 19, "b", &root, &err), 0,
	       "bools");
	{
		int v = -1;

		is_int(tfk_tp_bool(&root.kids[0], "b", &v, &err), 0, "True");
		is_int(v, 1, "is 1");
		is_int(tfk_tp_bool(&root.kids[1], "b", &v, &err), 0, "0");
		is_int(v, 0, "is 0");
		is_int(tfk_tp_bool(&root.kids[2], "b", &v, &err), TFK_EINVAL,
		       "yes refused");
	}
	tfk_tp_free(&root);
}

int main(void)
{
	docs_example();
	other_forms();
	refusals();
	deep();
	return tap_done();
}
