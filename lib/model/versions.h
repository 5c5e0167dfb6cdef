/*
 * versions.h - the version directories of a served model, as TF
 * Serving's file system storage path source finds them: under a base
 * path, each subdirectory whose name is a non-negative decimal number
 * is a version of the model (TF Serving writes them zero-padded,
 * "00000123", and the number is what counts).
 *
 * A version is complete, and so ready to load, when its directory
 * holds a SavedModel's saved_model.pb (TF Serving's default) or, for a
 * TFLite model, model.tflite (TF Serving's --prefer_tflite_model
 * layout); with both, the SavedModel. Anything else (a directory still
 * being copied, a stray file) is left alone. The model file's size and
 * modification time are reported so that a caller can retry a version
 * that failed to load once it has changed.
 */
#ifndef TFK_VERSIONS_H
#define TFK_VERSIONS_H

#include "model/servable.h"
#include "util/err.h"

#include <stdint.h>

struct tfk_version_dir {
	int64_t version;
	enum tfk_servable_kind kind;	/* 0: not complete */
	char *path;			/* base/NAME: what to load */
	int64_t size;			/* of the model file; -1 without */
	int64_t mtime_ns;
};

/*
 * List the numbered subdirectories of base into *v (heap array of *n,
 * highest version first; pair with tfk_versions_free), complete or not.
 * Names that are not all digits, or whose number is above INT64_MAX,
 * and entries that are not directories are skipped. Errors: TFK_EIO
 * "base: cannot open: No such file or directory", TFK_ENOMEM; *v NULL
 * and *n 0 on failure.
 */
int tfk_versions_scan(const char *base, struct tfk_version_dir **v, int *n,
		      struct tfk_err *err);
void tfk_versions_free(struct tfk_version_dir *v, int n);

/* The index in v[0..n) of the highest complete version, or -1. */
int tfk_versions_latest(const struct tfk_version_dir *v, int n);

#endif
