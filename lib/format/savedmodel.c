/*
 * savedmodel.c - load DIR/saved_model.pb (see savedmodel.h).
 *
 * The file is read whole and unpacked by protobuf-c from the protos in
 * formats/ (TensorFlow's field numbers), with allocations through the
 * tfk_malloc hook so tests can fail them. protobuf-c says only "failed"
 * for bad bytes, so before unpacking, the wire structure is walked once,
 * driven by protobuf-c's own message descriptors (every nested message
 * of every known field), to give the byte offset, the message and field,
 * and the reason (truncated length, a known field with the wrong wire
 * type, a broken packed run, nesting past 100) that the error message
 * promises; the walk is linear and cheap next to the unpack.
 *
 * The index built on top (tag lists, signatures and tensor infos sorted
 * by key) points into the protobuf tree: nothing is copied twice. A
 * mapped file with a lazily decoded tree was rejected: saved_model.pb
 * files are kilobytes to a few megabytes, and every consumer (show, the
 * importer) walks most of the tree anyway.
 */
#include "format/savedmodel.h"

#include "util/alloc.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* protobuf-c allocations through the test hook. data, when not NULL,
 * is an int set to 1 when an allocation fails: protobuf-c reports that
 * and bad bytes alike (NULL), and only this tells them apart. */
static void *pb_alloc(void *data, size_t n)
{
	void *p = tfk_malloc(n ? n : 1);

	if (!p && data)
		*(int *)data = 1;
	return p;
}

static void pb_free(void *data, void *p)
{
	(void)data;
	tfk_free(p);
}

static ProtobufCAllocator pb_allocator = { pb_alloc, pb_free, NULL };

/* Wire walk ----------------------------------------------------------- */

/* Read a varint at *off (< n); 0, or -1 when it runs past n or over 10
 * bytes. */
static int wire_varint(const uint8_t *p, size_t n, size_t *off, uint64_t *v)
{
	uint64_t x = 0;
	int shift = 0;

	while (*off < n && shift < 70) {
		uint8_t b = p[(*off)++];

		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return 0;
		}
		shift += 7;
	}
	return -1;
}

/* Nesting deeper than this is refused (protobuf's own default limit). */
#define WIRE_MAX_DEPTH 100

/* The wire type a field of type t is written with when not packed. */
static int wire_type_of(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_DOUBLE:
		return 1;
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_FIXED32:
	case PROTOBUF_C_TYPE_FLOAT:
		return 5;
	case PROTOBUF_C_TYPE_STRING:
	case PROTOBUF_C_TYPE_BYTES:
	case PROTOBUF_C_TYPE_MESSAGE:
		return 2;
	default:
		return 0;
	}
}

/* A packed run of scalars of wire type wt in p[off..end). */
static int wire_packed_ok(const uint8_t *p, size_t off, size_t end, int wt)
{
	uint64_t v;

	if (wt == 1 || wt == 5)
		return (end - off) % (wt == 1 ? 8u : 4u) == 0;
	while (off < end)
		if (wire_varint(p, end, &off, &v))
			return 0;
	return 1;
}

static const char *field_name(char *buf, size_t n,
			      const ProtobufCMessageDescriptor *d,
			      const ProtobufCFieldDescriptor *f, uint64_t num)
{
	if (f)
		snprintf(buf, n, "%s.%s", d->short_name, f->name);
	else
		snprintf(buf, n, "%s field %" PRIu64, d->short_name, num);
	return buf;
}

/*
 * Walk the message p[start..end) (offsets into the whole file) whose
 * type is d: every key, varint and length must be whole and inside the
 * message, every known field must have its type's wire type (a repeated
 * scalar may also be packed, and then its run must be whole), and known
 * message fields are walked in turn. Unknown fields are legal (newer
 * TensorFlow writes fields our protos leave out) and skipped. Returns 0
 * or TFK_ECORRUPT "at byte OFF: Type.field: what".
 */
/* "Type.field" or "Type field N" of the field at hand, formatted only
 * for an error message (formatting it per field cost more than the
 * unpack). */
#define FNAME field_name(fname, sizeof(fname), d, f, key >> 3)

static int wire_walk(const uint8_t *p, size_t start, size_t end,
		     const ProtobufCMessageDescriptor *d, int depth,
		     struct tfk_err *err)
{
	size_t off = start;

	if (depth > WIRE_MAX_DEPTH)
		return tfk_errf(err, TFK_ECORRUPT, "at byte %zu: %s: nested "
				"more than %d deep", start, d->short_name,
				WIRE_MAX_DEPTH);
	while (off < end) {
		const ProtobufCFieldDescriptor *f;
		size_t at = off;
		uint64_t key, len, v;
		char fname[96];
		int wt;

		if (wire_varint(p, end, &off, &key))
			return tfk_errf(err, TFK_ECORRUPT, "at byte %zu: %s: "
					"field key runs past the end of the "
					"message", at, d->short_name);
		wt = (int)(key & 7);
		if ((key >> 3) == 0 || (key >> 3) > 0x1fffffff)
			return tfk_errf(err, TFK_ECORRUPT, "at byte %zu: %s: "
					"invalid field number %" PRIu64, at,
					d->short_name, key >> 3);
		f = protobuf_c_message_descriptor_get_field(d,
							    (unsigned)(key >> 3));
		if (f && wt != wire_type_of(f->type) &&
		    !(wt == 2 && f->label == PROTOBUF_C_LABEL_REPEATED &&
		      wire_type_of(f->type) != 2))
			return tfk_errf(err, TFK_ECORRUPT, "at byte %zu: %s: "
					"wire type %d, expected %d", at, FNAME,
					wt, wire_type_of(f->type));
		switch (wt) {
		case 0:
			if (wire_varint(p, end, &off, &v))
				return tfk_errf(err, TFK_ECORRUPT, "at byte "
						"%zu: %s: truncated varint",
						at, FNAME);
			break;
		case 1:
		case 5:
			if (end - off < (wt == 1 ? 8u : 4u))
				return tfk_errf(err, TFK_ECORRUPT, "at byte "
						"%zu: %s: truncated", at,
						FNAME);
			off += wt == 1 ? 8 : 4;
			break;
		case 2:
			if (wire_varint(p, end, &off, &len))
				return tfk_errf(err, TFK_ECORRUPT, "at byte "
						"%zu: %s: truncated length", at,
						FNAME);
			if (len > end - off)
				return tfk_errf(err, TFK_ECORRUPT, "at byte "
						"%zu: %s: length %" PRIu64
						" runs past the end (%zu bytes "
						"left)", at, FNAME, len,
						end - off);
			if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
				int rc = wire_walk(p, off, off + len,
						   f->descriptor, depth + 1,
						   err);
				if (rc)
					return rc;
			} else if (f && wire_type_of(f->type) != 2 &&
				   !wire_packed_ok(p, off, off + len,
						   wire_type_of(f->type))) {
				return tfk_errf(err, TFK_ECORRUPT, "at byte "
						"%zu: %s: bad packed values",
						at, FNAME);
			}
			off += len;
			break;
		default:
			return tfk_errf(err, TFK_ECORRUPT, "at byte %zu: %s: "
					"unsupported wire type %d", at, FNAME,
					wt);
		}
	}
	return 0;
#undef FNAME
}

/* Index --------------------------------------------------------------- */

/* A map entry (a TensorInfo or a SignatureDef) by key, in file order. */
struct entry_ref {
	const char *key;
	const void *value;
	size_t order;
};

static int cmp_ref(const void *a, const void *b)
{
	const struct entry_ref *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	if (c)
		return c;
	return x->order < y->order ? -1 : x->order > y->order;
}

/*
 * Sort n (key, tensor info) entries by key; for a key given twice the
 * later one wins, as protobuf map semantics say. Fills *out (count into
 * *n_out). 0 or TFK_ENOMEM.
 */
static int index_tinfos(struct entry_ref *refs, size_t n,
			struct tfk_tensor_info **out, int *n_out,
			struct tfk_err *err)
{
	struct tfk_tensor_info *ti;
	size_t i, k = 0;

	*out = NULL;
	*n_out = 0;
	if (!n)
		return 0;
	qsort(refs, n, sizeof(*refs), cmp_ref);
	ti = tfk_calloc(n, sizeof(*ti));
	if (!ti)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		const Tensorflow__TensorInfo *p = refs[i].value;
		struct tfk_tensor_info *t;

		if (i + 1 < n && !strcmp(refs[i].key, refs[i + 1].key))
			continue;
		t = &ti[k++];
		t->key = refs[i].key;
		t->name = "";
		if (!p)
			continue;
		switch (p->encoding_case) {
		case TENSORFLOW__TENSOR_INFO__ENCODING_NAME:
			t->encoding = TFK_TINFO_NAME;
			t->name = p->name;
			break;
		case TENSORFLOW__TENSOR_INFO__ENCODING_COO_SPARSE:
			t->encoding = TFK_TINFO_COO_SPARSE;
			break;
		case TENSORFLOW__TENSOR_INFO__ENCODING_COMPOSITE_TENSOR:
			t->encoding = TFK_TINFO_COMPOSITE;
			break;
		default:
			break;
		}
		t->dtype = (int)p->dtype;
		if (p->tensor_shape) {
			const Tensorflow__TensorShapeProto *s = p->tensor_shape;
			int64_t *d;
			size_t j;

			t->has_shape = 1;
			t->unknown_rank = !!s->unknown_rank;
			if (!t->unknown_rank && s->n_dim) {
				d = s->n_dim <= INT32_MAX ?
					tfk_calloc(s->n_dim, sizeof(*d)) : NULL;
				if (!d) {
					/* The caller frees what is done. */
					*out = ti;
					*n_out = (int)k;
					if (s->n_dim > INT32_MAX)
						return tfk_errf(err,
							TFK_ECORRUPT, "'%s': "
							"absurd rank", t->key);
					return tfk_errf(err, TFK_ENOMEM,
							"out of memory");
				}
				for (j = 0; j < s->n_dim; j++)
					d[j] = s->dim[j] ? s->dim[j]->size : 0;
				t->dims = d;
				t->rank = (int)s->n_dim;
			}
		}
	}
	*out = ti;
	*n_out = (int)k;
	return 0;
}

static void release_tinfos(struct tfk_tensor_info *ti, int n)
{
	int i;

	for (i = 0; ti && i < n; i++)
		tfk_free((void *)ti[i].dims);
	tfk_free(ti);
}

static const Tensorflow__GraphDef empty_graph =
	TENSORFLOW__GRAPH_DEF__INIT;

static int index_signature(struct tfk_signature *s, const char *key,
			   const Tensorflow__SignatureDef *sd,
			   struct tfk_err *err)
{
	struct entry_ref *refs;
	size_t i, n;
	int rc;

	s->key = key;
	s->method_name = sd ? sd->method_name : "";
	if (!sd)
		return 0;
	n = sd->n_inputs > sd->n_outputs ? sd->n_inputs : sd->n_outputs;
	refs = tfk_calloc(n ? n : 1, sizeof(*refs));
	if (!refs)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	for (i = 0; i < sd->n_inputs; i++) {
		refs[i].key = sd->inputs[i]->key;
		refs[i].value = sd->inputs[i]->value;
		refs[i].order = i;
	}
	rc = index_tinfos(refs, sd->n_inputs, &s->inputs, &s->n_inputs, err);
	if (!rc) {
		for (i = 0; i < sd->n_outputs; i++) {
			refs[i].key = sd->outputs[i]->key;
			refs[i].value = sd->outputs[i]->value;
			refs[i].order = i;
		}
		rc = index_tinfos(refs, sd->n_outputs, &s->outputs,
				  &s->n_outputs, err);
	}
	tfk_free(refs);
	return rc;
}

static int index_meta_graph(struct tfk_meta_graph *mg,
			    const Tensorflow__MetaGraphDef *p,
			    struct tfk_err *err)
{
	static const char *const no_tags[1] = { NULL };
	struct entry_ref *refs;
	size_t i, k, n = p->n_signature_def;
	int rc = 0;

	mg->proto = p;
	mg->graph_def = p->graph_def ? p->graph_def : &empty_graph;
	mg->saver_def = p->saver_def;
	mg->object_graph = p->object_graph_def;
	mg->tags = no_tags;
	mg->tensorflow_version = "";
	if (p->meta_info_def) {
		if (p->meta_info_def->n_tags > INT32_MAX)
			return tfk_errf(err, TFK_ECORRUPT, "absurd tag count");
		mg->n_tags = (int)p->meta_info_def->n_tags;
		if (mg->n_tags)
			mg->tags = (const char *const *)p->meta_info_def->tags;
		mg->tensorflow_version = p->meta_info_def->tensorflow_version;
	}
	if (!n)
		return 0;
	refs = tfk_calloc(n, sizeof(*refs));
	mg->signatures = tfk_calloc(n, sizeof(*mg->signatures));
	if (!refs || !mg->signatures) {
		tfk_free(refs);
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	for (i = 0; i < n; i++) {
		refs[i].key = p->signature_def[i]->key;
		refs[i].value = p->signature_def[i]->value;
		refs[i].order = i;
	}
	qsort(refs, n, sizeof(*refs), cmp_ref);
	for (i = 0, k = 0; i < n && !rc; i++) {
		if (i + 1 < n && !strcmp(refs[i].key, refs[i + 1].key))
			continue;
		rc = index_signature(&mg->signatures[k++], refs[i].key,
				     refs[i].value, err);
	}
	mg->n_signatures = (int)k;
	tfk_free(refs);
	return rc;
}

void tfk_savedmodel_close(struct tfk_savedmodel *sm)
{
	int i, j;

	if (!sm)
		return;
	for (i = 0; sm->meta_graphs && i < sm->n_meta_graphs; i++) {
		struct tfk_meta_graph *mg = &sm->meta_graphs[i];

		for (j = 0; mg->signatures && j < mg->n_signatures; j++) {
			release_tinfos(mg->signatures[j].inputs,
				       mg->signatures[j].n_inputs);
			release_tinfos(mg->signatures[j].outputs,
				       mg->signatures[j].n_outputs);
		}
		tfk_free(mg->signatures);
	}
	tfk_free(sm->meta_graphs);
	if (sm->proto)
		tensorflow__saved_model__free_unpacked(sm->proto,
						       &pb_allocator);
	tfk_free(sm->dir);
	tfk_free(sm->variables_prefix);
	tfk_free(sm);
}

static char *path_join(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	char *s = tfk_malloc(na + nb + 2);

	if (!s)
		return NULL;
	memcpy(s, a, na);
	s[na] = '/';
	memcpy(s + na + 1, b, nb + 1);
	return s;
}

int tfk_savedmodel_parse(struct tfk_savedmodel **out, const void *data,
			 size_t n, const char *name, const char *dir,
			 struct tfk_err *err)
{
	struct tfk_savedmodel *sm;
	size_t i;
	int rc;

	*out = NULL;
	if (!name)
		name = "saved_model.pb";
	rc = wire_walk(data, 0, n, &tensorflow__saved_model__descriptor, 0,
		       err);
	if (rc)
		return tfk_err_prefix(err, "%s", name);
	sm = tfk_calloc(1, sizeof(*sm));
	if (!sm)
		return tfk_errf(err, TFK_ENOMEM, "%s: out of memory", name);
	{
		int oom = 0;
		ProtobufCAllocator a = { pb_alloc, pb_free, &oom };

		sm->proto = tensorflow__saved_model__unpack(&a, n, data);
		if (!sm->proto && oom) {
			tfk_savedmodel_close(sm);
			return tfk_errf(err, TFK_ENOMEM, "%s: out of memory",
					name);
		}
	}
	if (!sm->proto) {
		tfk_savedmodel_close(sm);
		/* The walk passed, so the damage is deeper: inside a
		 * nested message of a MetaGraphDef. */
		return tfk_errf(err, TFK_ECORRUPT, "%s: not a valid "
				"SavedModel (protobuf parse failed inside a "
				"MetaGraphDef)", name);
	}
	sm->schema_version = sm->proto->saved_model_schema_version;
	if (sm->proto->n_meta_graphs > INT32_MAX) {
		tfk_savedmodel_close(sm);
		return tfk_errf(err, TFK_ECORRUPT, "%s: absurd MetaGraphDef "
				"count", name);
	}
	if (sm->proto->n_meta_graphs) {
		sm->meta_graphs = tfk_calloc(sm->proto->n_meta_graphs,
					     sizeof(*sm->meta_graphs));
		if (!sm->meta_graphs) {
			tfk_savedmodel_close(sm);
			return tfk_errf(err, TFK_ENOMEM, "%s: out of memory",
					name);
		}
	}
	sm->n_meta_graphs = (int)sm->proto->n_meta_graphs;
	for (i = 0; i < sm->proto->n_meta_graphs; i++) {
		rc = index_meta_graph(&sm->meta_graphs[i],
				      sm->proto->meta_graphs[i], err);
		if (rc) {
			tfk_savedmodel_close(sm);
			return tfk_err_prefix(err, "%s: MetaGraphDef %zu",
					      name, i);
		}
	}
	if (dir) {
		struct stat st;
		char *idx;

		sm->dir = tfk_strdup(dir);
		sm->variables_prefix = path_join(dir, "variables/variables");
		idx = sm->variables_prefix ?
			path_join(sm->variables_prefix, "index") : NULL;
		if (!sm->dir || !idx) {
			tfk_free(idx);
			tfk_savedmodel_close(sm);
			return tfk_errf(err, TFK_ENOMEM, "%s: out of memory",
					name);
		}
		/* path_join put a '/' where the '.' of ".index" goes. */
		idx[strlen(sm->variables_prefix)] = '.';
		sm->has_variables = stat(idx, &st) == 0 && S_ISREG(st.st_mode);
		tfk_free(idx);
	}
	*out = sm;
	return 0;
}

int tfk_savedmodel_open(struct tfk_savedmodel **out, const char *dir,
			struct tfk_err *err)
{
	struct stat st;
	char *path;
	uint8_t *buf = NULL;
	size_t n = 0;
	FILE *f;
	int rc;

	*out = NULL;
	if (stat(dir, &st) != 0)
		return tfk_errf(err, errno == ENOENT ? TFK_ENOTFOUND : TFK_EIO,
				"%s: %s", dir, errno == ENOENT ?
				"no such directory" : strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return tfk_errf(err, TFK_EINVAL, "%s: not a directory (a "
				"SavedModel is a directory holding "
				"saved_model.pb)", dir);
	path = path_join(dir, "saved_model.pb");
	if (!path)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	f = fopen(path, "rb");
	if (!f) {
		int e = errno;
		char *txt = path_join(dir, "saved_model.pbtxt");
		int have_txt = txt && stat(txt, &st) == 0;

		tfk_free(txt);
		if (e == ENOENT && have_txt)
			rc = tfk_errf(err, TFK_EINVAL, "%s: saved_model.pbtxt "
				      "(text format) is not supported; "
				      "only saved_model.pb", dir);
		else if (e == ENOENT)
			rc = tfk_errf(err, TFK_ENOTFOUND, "%s: SavedModel "
				      "file does not exist at: %s", dir, path);
		else
			rc = tfk_errf(err, TFK_EIO, "%s: %s", path,
				      strerror(e));
		tfk_free(path);
		return rc;
	}
	if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) &&
	    st.st_size > 0) {
		n = (size_t)st.st_size;
		buf = tfk_malloc(n);
		if (!buf) {
			fclose(f);
			rc = tfk_errf(err, TFK_ENOMEM, "%s: out of memory "
				      "(%zu bytes)", path, n);
			tfk_free(path);
			return rc;
		}
		if (fread(buf, 1, n, f) != n) {
			rc = tfk_errf(err, TFK_EIO, "%s: %s", path, ferror(f) ?
				      strerror(errno) : "file shrank while "
				      "being read");
			fclose(f);
			tfk_free(buf);
			tfk_free(path);
			return rc;
		}
	} else if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
		fclose(f);
		rc = tfk_errf(err, TFK_EIO, "%s: not a regular file", path);
		tfk_free(path);
		return rc;
	}
	fclose(f);
	if (n == 0) {
		rc = tfk_errf(err, TFK_ECORRUPT, "%s: empty file (no "
			      "MetaGraphDef)", path);
		tfk_free(path);
		return rc;
	}
	rc = tfk_savedmodel_parse(out, buf, n, path, dir, err);
	tfk_free(buf);
	tfk_free(path);
	return rc;
}

/* Lookups ------------------------------------------------------------- */

/* Is the comma-separated tag_set equal, as a set, to tags[0..n)? */
static int same_tag_set(const char *tag_set, const char *const *tags, int n)
{
	const char *p = tag_set;
	int i;

	/* Every tag of the string is in tags... */
	while (*p) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		int found = len == 0;

		for (i = 0; i < n && !found; i++)
			found = strlen(tags[i]) == len &&
				!memcmp(tags[i], p, len);
		if (!found)
			return 0;
		p += len + (e ? 1 : 0);
	}
	/* ...and every tag is in the string. */
	for (i = 0; i < n; i++) {
		size_t len = strlen(tags[i]);
		int found = 0;

		for (p = tag_set; *p && !found;) {
			const char *e = strchr(p, ',');
			size_t l = e ? (size_t)(e - p) : strlen(p);

			found = l == len && !memcmp(tags[i], p, l);
			p += l + (e ? 1 : 0);
		}
		if (!found)
			return 0;
	}
	return 1;
}

int tfk_savedmodel_find_tags(const struct tfk_savedmodel *sm,
			     const char *tag_set, struct tfk_err *err)
{
	char list[TFK_ERR_MSG_MAX];
	size_t used = 0;
	int i, j;

	for (i = 0; i < sm->n_meta_graphs; i++)
		if (same_tag_set(tag_set, sm->meta_graphs[i].tags,
				 sm->meta_graphs[i].n_tags))
			return i;
	list[0] = '\0';
	for (i = 0; i < sm->n_meta_graphs && used < sizeof(list); i++) {
		const struct tfk_meta_graph *mg = &sm->meta_graphs[i];

		used += (size_t)snprintf(list + used, sizeof(list) - used,
					 "%s'", i ? ", " : "");
		for (j = 0; j < mg->n_tags && used < sizeof(list); j++)
			used += (size_t)snprintf(list + used,
						 sizeof(list) - used, "%s%s",
						 j ? ", " : "", mg->tags[j]);
		if (used < sizeof(list))
			used += (size_t)snprintf(list + used,
						 sizeof(list) - used, "'");
	}
	return tfk_errf(err, TFK_ENOTFOUND, "MetaGraphDef associated with "
			"tag-set %s could not be found in the SavedModel; "
			"tag-sets are: %s", tag_set,
			sm->n_meta_graphs ? list : "(none)");
}

const struct tfk_signature *
tfk_savedmodel_signature(const struct tfk_meta_graph *mg, const char *key,
			 struct tfk_err *err)
{
	char list[TFK_ERR_MSG_MAX];
	size_t used = 0;
	int i;

	for (i = 0; i < mg->n_signatures; i++)
		if (!strcmp(mg->signatures[i].key, key))
			return &mg->signatures[i];
	list[0] = '\0';
	for (i = 0; i < mg->n_signatures && used < sizeof(list); i++)
		used += (size_t)snprintf(list + used, sizeof(list) - used,
					 "%s%s", i ? ", " : "",
					 mg->signatures[i].key);
	tfk_errf(err, TFK_ENOTFOUND, "could not find signature \"%s\"; "
		 "signatures are: %s", key,
		 mg->n_signatures ? list : "(none)");
	return NULL;
}

/* Ops ----------------------------------------------------------------- */

struct fn_ref {
	const char *name;
	const Tensorflow__FunctionDef *fd;
	int seen;
};

static int cmp_fn(const void *a, const void *b)
{
	return strcmp(((const struct fn_ref *)a)->name,
		      ((const struct fn_ref *)b)->name);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

struct op_walk {
	struct fn_ref *fns;
	size_t n_fns;
	const Tensorflow__FunctionDef **todo;
	size_t n_todo;
	const char **ops;
	size_t n_ops, cap_ops;
};

/* TF's mark_op_as_used: a function goes on the work list the first time
 * it is named; anything else is an op. */
static int mark(struct op_walk *w, const char *name)
{
	struct fn_ref key = { name, NULL, 0 }, *f;

	f = w->n_fns ? bsearch(&key, w->fns, w->n_fns, sizeof(key), cmp_fn)
		     : NULL;
	if (f) {
		if (!f->seen) {
			f->seen = 1;
			w->todo[w->n_todo++] = f->fd;
		}
		return 0;
	}
	if (w->n_ops == w->cap_ops) {
		size_t cap = w->cap_ops ? 2 * w->cap_ops : 64;
		const char **v = tfk_realloc(w->ops, cap * sizeof(*v));

		if (!v)
			return TFK_ENOMEM;
		w->ops = v;
		w->cap_ops = cap;
	}
	w->ops[w->n_ops++] = name;
	return 0;
}

static int process_node(struct op_walk *w, const Tensorflow__NodeDef *nd)
{
	size_t i;
	int rc;

	if (!nd)
		return 0;
	rc = mark(w, nd->op);
	if (rc || (strcmp(nd->op, "PartitionedCall") &&
		   strcmp(nd->op, "StatefulPartitionedCall")))
		return rc;
	for (i = 0; i < nd->n_attr; i++) {
		const Tensorflow__AttrValue *v = nd->attr[i]->value;

		if (!strcmp(nd->attr[i]->key, "f") && v &&
		    v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_FUNC &&
		    v->func)
			return mark(w, v->func->name);
	}
	/* TF's attr["f"] of a node without one is an empty name. */
	return mark(w, "");
}

int tfk_savedmodel_ops(const struct tfk_meta_graph *mg, const char ***ops,
		       struct tfk_err *err)
{
	const Tensorflow__GraphDef *g = mg->graph_def;
	const Tensorflow__FunctionDefLibrary *lib = g->library;
	struct op_walk w;
	size_t i, k;
	int rc = 0;

	memset(&w, 0, sizeof(w));
	*ops = NULL;
	if (lib && lib->n_function) {
		w.fns = tfk_calloc(lib->n_function, sizeof(*w.fns));
		w.todo = tfk_calloc(lib->n_function, sizeof(*w.todo));
		if (!w.fns || !w.todo) {
			rc = TFK_ENOMEM;
			goto out;
		}
		for (i = 0; i < lib->n_function; i++) {
			const Tensorflow__FunctionDef *fd = lib->function[i];

			if (!fd || !fd->signature)
				continue;
			w.fns[w.n_fns].name = fd->signature->name;
			w.fns[w.n_fns++].fd = fd;
		}
		qsort(w.fns, w.n_fns, sizeof(*w.fns), cmp_fn);
	}
	for (i = 0; i < g->n_node && !rc; i++)
		rc = process_node(&w, g->node[i]);
	while (w.n_todo && !rc) {
		const Tensorflow__FunctionDef *fd = w.todo[--w.n_todo];

		for (i = 0; i < fd->n_node_def && !rc; i++)
			rc = process_node(&w, fd->node_def[i]);
	}
	if (rc)
		goto out;
	if (w.n_ops)
		qsort(w.ops, w.n_ops, sizeof(*w.ops), cmp_str);
	for (i = 0, k = 0; i < w.n_ops; i++)
		if (!k || strcmp(w.ops[k - 1], w.ops[i]))
			w.ops[k++] = w.ops[i];
	if (k > INT32_MAX) {
		rc = TFK_EINVAL;
		goto out;
	}
	tfk_free(w.fns);
	tfk_free(w.todo);
	if (!w.ops) {
		w.ops = tfk_malloc(sizeof(*w.ops));
		if (!w.ops)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	*ops = w.ops;
	return (int)k;
out:
	tfk_free(w.fns);
	tfk_free(w.todo);
	tfk_free(w.ops);
	return rc == TFK_ENOMEM ? tfk_errf(err, rc, "out of memory")
				: tfk_errf(err, rc, "too many op types");
}

const char *tfk_savedmodel_dtype_name(int t)
{
	const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
		&tensorflow__data_type__descriptor, t);

	return v ? v->name : NULL;
}
