/*
 * modelconfig.h - TF Serving's --model_config_file: a text-format
 * ModelServerConfig (tensorflow_serving/config/model_server_config.proto)
 * holding a model_config_list, read into plain structs.
 *
 *   model_config_list {
 *     config {
 *       name: "half"
 *       base_path: "/models/half"
 *       model_platform: "tensorflow"
 *       model_version_policy { specific { versions: 1 versions: 2 } }
 *       version_labels { key: "stable" value: 1 }
 *     }
 *   }
 *
 * Fields taken, as TF Serving takes them: name, base_path (both
 * required), model_platform ("tensorflow", the default, or "tflite"),
 * model_version_policy (latest { num_versions }, default 1; all { };
 * specific { versions }), version_labels (label -> version). Anything
 * else is refused with its place, as TF Serving refuses unknown fields:
 * custom_model_config, logging_config and the deprecated model_type
 * included. Names must be unique, non-empty and free of '/' and ':'
 * (they are URL components); a label must name one of the specific
 * versions when the policy is specific.
 */
#ifndef TFK_MODELCONFIG_H
#define TFK_MODELCONFIG_H

#include "util/err.h"

#include <stddef.h>
#include <stdint.h>

enum tfk_version_policy {
	TFK_POLICY_LATEST,	/* the num_versions highest */
	TFK_POLICY_ALL,
	TFK_POLICY_SPECIFIC
};

struct tfk_version_label {
	char *label;
	int64_t version;
};

struct tfk_model_config {
	char *name, *base_path;
	enum tfk_version_policy policy;
	int num_versions;		/* latest: how many (>= 1) */
	int64_t *versions;		/* specific: which */
	int n_versions;
	struct tfk_version_label *labels;
	int n_labels;
};

struct tfk_server_config {
	struct tfk_model_config *models;
	int n_models;
};

/*
 * Parse a ModelServerConfig text (file names it in messages) into *c
 * (pair with tfk_server_config_free). Errors: the text format's
 * (util/textproto.h), TFK_EINVAL "models.config:4:7: config 'half':
 * base_path is required", TFK_ENOMEM. *c is empty on failure.
 */
int tfk_server_config_parse(const char *text, size_t n, const char *file,
			    struct tfk_server_config *c, struct tfk_err *err);
/* Read and parse a file (TFK_EIO when it cannot be read). */
int tfk_server_config_load(const char *path, struct tfk_server_config *c,
			   struct tfk_err *err);
void tfk_server_config_free(struct tfk_server_config *c);

/*
 * The same config from its binary form (TF Serving's ModelServerConfig
 * message, as ModelService/HandleReloadConfigRequest carries it;
 * formats/serving_apis.proto), checked by the same rules; messages
 * name "config[i]" instead of a line. TFK_EINVAL, TFK_ENOMEM.
 */
struct Tensorflow__Serving__ModelServerConfig;
int tfk_server_config_from_proto(
	const struct Tensorflow__Serving__ModelServerConfig *m,
	struct tfk_server_config *c, struct tfk_err *err);

/* Free one model's config (leaves it zeroed); a deep copy (0 or
 * TFK_ENOMEM, *o then empty). */
void tfk_model_config_free(struct tfk_model_config *m);
int tfk_model_config_copy(struct tfk_model_config *o,
			  const struct tfk_model_config *c);

/*
 * Which of the complete versions have[0..n) (highest first) policy c
 * serves: want[i] set to 1 or 0. Returns how many are wanted.
 */
int tfk_model_config_wanted(const struct tfk_model_config *c,
			    const int64_t *have, int n, int *want);

#endif
