"""t-images: tfk-images and tfk-text against Keras 3's
image_dataset_from_directory and text_dataset_from_directory.

A small corpus of real files made here with Pillow (and tests/py/images.py
for a 16-bit RGB PNG): baseline JPEGs in 4:2:0, 4:2:2 and 4:4:4,
progressive, grayscale and CMYK JPEGs, palette PNGs (with and without
transparency), RGBA, 16-bit gray and RGB PNGs, a GIF, 24-bit and 8-bit
gray BMPs, odd sizes (1x1, 3x7, 33x17) and photos downscaled 11x to 25x,
in two class directories (one with a subdirectory). For each Keras
configuration (validation_split with subset training, validation and
both, seed, shuffle on and off, class_names, a labels list, label_mode int,
categorical and binary, color_mode, image_size, interpolation,
crop_to_aspect_ratio, pad_to_aspect_ratio) tfk-images with the
corresponding options must give:

  - the files of each subset in Keras' order (Keras' file_paths: its
    numpy-seeded shuffle and split; the tf.data shuffle Keras adds on top
    for training is seeded its own way and not reproduced, see tfk-shuffle);
  - each file's label as Keras yields it (int, one-hot, 0/1);
  - with shuffle off, every image within 1 of Keras' float32 pixels
    clamped to 0..255 (we store uint8 rounded, so bicubic's overshoot is
    clamped; the largest error per format is shown).

Keras refuses rgba for JPEG and GIF and grayscale for GIF and BMP
(decode_image), so those modes run on the formats it accepts. Known
departure left out of the pixel check: an 8-bit BMP with a colour
palette, which TF reads as gray indices and we as its colours.

Text: the same for tfk-text (files per subset and order, labels, text
bytes, max_length on ASCII text).
"""
import contextlib
import glob
import io
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tftap import T  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "py"))
import images  # noqa: E402

import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402

t = T()


# --- the corpus -------------------------------------------------------------
def photo(h, w, seed):
    if h < 16 or w < 16:    # images.photo needs room for its base
        return np.asarray(images.photo(64, 64, seed))[:h, :w]
    return np.asarray(images.photo(h, w, seed))


def corpus(root):
    """name -> format, written under root/<class>/..."""
    made = {}

    def put(rel, fmt, im=None, **kw):
        p = os.path.join(root, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        if im is not None:
            im.save(p, **kw)
        made[rel] = fmt
        return p

    a = photo(477, 720, 1)
    put("cats/big420.jpg", "jpeg", Image.fromarray(a), quality=90)
    put("cats/prog.jpg", "jpeg-progressive", Image.fromarray(photo(480, 640, 2)),
        quality=85, progressive=True)
    put("cats/s444.jpg", "jpeg-444", Image.fromarray(photo(97, 131, 3)),
        quality=92, subsampling=0)
    put("cats/s422.jpg", "jpeg-422", Image.fromarray(photo(75, 99, 4)),
        quality=92, subsampling=1)
    put("cats/gray.jpg", "jpeg-gray", Image.fromarray(photo(61, 83, 5)[..., 1]),
        quality=90)
    put("cats/cmyk.jpg", "jpeg-cmyk",
        Image.fromarray(photo(50, 70, 6)).convert("CMYK"), quality=90)
    put("cats/sub/huge.jpg", "jpeg-25x", Image.fromarray(
        np.asarray(Image.fromarray(photo(400, 533, 7)).resize((1600, 1200),
                                                             Image.BICUBIC))),
        quality=88)
    put("cats/odd1x1.png", "png", Image.fromarray(photo(1, 1, 8)))
    put("dogs/pal.png", "png-palette",
        Image.fromarray(photo(45, 67, 9)).quantize(32))
    pt = Image.fromarray(photo(40, 52, 10)).quantize(16)
    pt.info["transparency"] = 3
    put("dogs/pal-trns.png", "png-palette", pt, transparency=3)
    rgba = np.concatenate([photo(37, 29, 11), photo(37, 29, 12)[..., :1]], -1)
    put("dogs/rgba.png", "png-rgba", Image.fromarray(rgba, "RGBA"))
    g16 = photo(33, 17, 13)[..., :1].astype(np.uint16) * 257 + 77
    images.png_write(put("dogs/gray16.png", "png-16bit"), g16, 0, 16)
    images.png_write(put("dogs/rgb16.png", "png-16bit"),
                     photo(30, 41, 14).astype(np.uint16) * 251 + 300, 2, 16)
    put("dogs/anim.gif", "gif", Image.fromarray(photo(3, 7, 15)).quantize(8))
    put("dogs/rgb.bmp", "bmp", Image.fromarray(photo(44, 58, 16)))
    put("dogs/gray8.bmp", "bmp", Image.fromarray(photo(25, 19, 17)[..., 2]))
    put("dogs/wide.jpg", "jpeg", Image.fromarray(photo(120, 720, 18)),
        quality=90)
    return made


img_root = t.path("img")
fmts = corpus(img_root)
# Keras' decode_image refuses rgba for JPEG/GIF and grayscale for GIF/BMP
gray_root, rgba_root = t.path("img-gray"), t.path("img-rgba")
for rel, f in fmts.items():
    for root, ok in ((gray_root, f.startswith("png") or
                      (f.startswith("jpeg") and f != "jpeg-cmyk")),
                     (rgba_root, f.startswith("png") or f == "bmp")):
        if ok:
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            os.link(os.path.join(img_root, rel), os.path.join(root, rel))
t.ok(len(fmts) == 17, "corpus: %d image files in 2 classes" % len(fmts))


# --- running both sides -------------------------------------------------------
def keras_call(fn, root, **kw):
    """fn(root, batch_size=None, verbose=False, **kw), Keras' progress
    lines kept off our TAP stream; a list of datasets (one per subset)."""
    with contextlib.redirect_stdout(io.StringIO()):
        ds = fn(root, batch_size=None, verbose=False, **kw)
    return list(ds) if isinstance(ds, (list, tuple)) else [ds]


def keras_items(ds, root):
    """[(relpath, label, value)] in Keras' yield order; value float32."""
    files = [os.path.relpath(p, root) for p in ds.file_paths]
    out = []
    for el in ds:
        x, y = el if isinstance(el, tuple) else (el, None)
        out.append((x.numpy(), None if y is None else y.numpy()))
    return files, out


def read_records(path):
    """[{feature: values}] from our TFRecords (a file or a prefix)."""
    paths = sorted(glob.glob(path + "-*-of-*.tfrecord")) or [path]
    out = []
    for p in paths:
        for r in tf.data.TFRecordDataset(p):
            f = tf.train.Example.FromString(r.numpy()).features.feature
            d = {}
            for k, v in f.items():
                kind = v.WhichOneof("kind")
                d[k] = list(getattr(v, kind).value) if kind else []
            out.append(d)
    return out


def ours(tool, root, args, subsets):
    """Run tool; return {subset: records}."""
    pre = t.path("o-%d" % ours.n)
    ours.n += 1
    t.tool(tool, root, "-q", "-o", pre, *args)
    if subsets == ["training", "validation"]:
        return {s: read_records(pre + "-" + s) for s in subsets}
    return {subsets[0]: read_records(pre)}


ours.n = 0
maxerr = {}


def image_case(what, kw, args, pixels, root=img_root, channels=3, size=(64, 64)):
    subsets = ["training", "validation"] if kw.get("subset") == "both" else \
        [kw.get("subset") or "all"]
    kds = keras_call(keras.utils.image_dataset_from_directory, root,
                     image_size=size, **kw)
    mine = ours("tfk-images", root,
                ["--image-size", "%dx%d" % size] + args, subsets)
    for sub, ds in zip(subsets, kds):
        files, items = keras_items(ds, root)
        recs = mine[sub]
        names = [r["filename"][0].decode() for r in recs]
        t.eq(names, files, "%s, %s: the files of Keras' file_paths, in its "
             "order" % (what, sub))
        if not pixels:
            # tf.data reshuffled Keras' elements: compare label multisets
            kl = sorted(str(np.asarray(y).tolist()) for _, y in items)
            ol = sorted(str(label_of(r, kw)) for r in recs)
            t.eq(ol, kl, "%s, %s: the same labels" % (what, sub))
            continue
        t.eq([label_of(r, kw) for r in recs],
             [np.asarray(y).tolist() for _, y in items],
             "%s, %s: each file's label as Keras yields it" % (what, sub))
        worst, where = 0.0, ""
        for name, r, (x, _) in zip(names, recs, items):
            got = np.frombuffer(r["image"][0], np.uint8).reshape(
                size[0], size[1], channels).astype(np.float64)
            # we store uint8: bicubic's overshoot is clamped to 0..255
            d = float(np.abs(got - np.clip(x, 0, 255)).max())
            f = fmts[name.split("/", 1)[-1] if name not in fmts else name]
            maxerr[f] = max(maxerr.get(f, 0.0), d)
            if d > worst:
                worst, where = d, name
        t.ok(worst <= 1.0, "%s, %s: pixels within 1 of Keras' (max %.3f, %s)"
             % (what, sub, worst, where))


def label_of(r, kw):
    v = r.get("label")
    if v is None:
        return None
    mode = kw.get("label_mode", "int")
    if mode == "binary":
        return [float(x) for x in v]
    if mode == "categorical":
        return [float(x) for x in v]
    return int(v[0])


# --- images ------------------------------------------------------------------
image_case("default rgb 64x64, no shuffle", dict(shuffle=False),
           ["--no-shuffle"], True)
image_case("subset both, seed 7, split 0.3",
           dict(seed=7, validation_split=0.3, subset="both"),
           ["--seed", "7", "--validation-split", "0.3", "--subset", "both"],
           False)
image_case("subset training, seed 1337, split 0.25",
           dict(seed=1337, validation_split=0.25, subset="training"),
           ["--seed", "1337", "--validation-split", "0.25", "--subset",
            "training"], False)
image_case("subset validation, no shuffle, split 0.4",
           dict(shuffle=False, validation_split=0.4, subset="validation"),
           ["--no-shuffle", "--validation-split", "0.4", "--subset",
            "validation"], True)
image_case("class_names dogs,cats, categorical",
           dict(shuffle=False, class_names=["dogs", "cats"],
                label_mode="categorical"),
           ["--no-shuffle", "--class-names", "dogs,cats", "--label-mode",
            "categorical"], True, size=(23, 31))
image_case("label_mode binary, 37x50", dict(shuffle=False, label_mode="binary"),
           ["--no-shuffle", "--label-mode", "binary"], True, size=(37, 50))
image_case("crop_to_aspect_ratio 40x64",
           dict(shuffle=False, crop_to_aspect_ratio=True),
           ["--no-shuffle", "--crop-to-aspect-ratio"], True, size=(40, 64))
image_case("pad_to_aspect_ratio 48x48",
           dict(shuffle=False, pad_to_aspect_ratio=True),
           ["--no-shuffle", "--pad-to-aspect-ratio"], True, size=(48, 48))
image_case("pad_to_aspect_ratio 20x90, area",
           dict(shuffle=False, pad_to_aspect_ratio=True, interpolation="area"),
           ["--no-shuffle", "--pad-to-aspect-ratio", "--interpolation", "area"],
           True, size=(20, 90))
image_case("bicubic 50x50", dict(shuffle=False, interpolation="bicubic"),
           ["--no-shuffle", "--interpolation", "bicubic"], True, size=(50, 50))
image_case("nearest 30x30", dict(shuffle=False, interpolation="nearest"),
           ["--no-shuffle", "--interpolation", "nearest"], True, size=(30, 30))
image_case("grayscale (JPEG, PNG)", dict(shuffle=False, color_mode="grayscale"),
           ["--no-shuffle", "--color-mode", "grayscale"], True, root=gray_root,
           channels=1)
image_case("rgba (PNG, BMP)", dict(shuffle=False, color_mode="rgba"),
           ["--no-shuffle", "--color-mode", "rgba"], True, root=rgba_root,
           channels=4)
image_case("labels none", dict(shuffle=False, labels=None),
           ["--no-shuffle", "--labels", "none"], True)
# Keras labels=[...]: one value per file in sorted path order
listed = [(0, 2, 5)[i % 3] for i in range(len(fmts))]
with open(t.path("labels.txt"), "w") as f:
    f.write("".join("%d\n" % v for v in listed))
image_case("labels list [0, 2, 5, ...], categorical",
           dict(shuffle=False, labels=listed, label_mode="categorical"),
           ["--no-shuffle", "--label-list", t.path("labels.txt"),
            "--label-mode", "categorical"], True)
image_case("labels list, seed 5, subset both",
           dict(labels=listed, seed=5, validation_split=0.3, subset="both"),
           ["--label-list", t.path("labels.txt"), "--seed", "5",
            "--validation-split", "0.3", "--subset", "both"], False)
t.diag("largest pixel error per format: " + ", ".join(
    "%s %.3f" % kv for kv in sorted(maxerr.items())))

# Keras gives no training files when int(split * n) is 0; we refuse
rc, _, err = t.run("tfk-images", img_root, "-q", "--seed", "1",
                   "--validation-split", "0.05", "--subset", "training",
                   "-o", "z", check=False)
t.ok(rc == 1 and "holds out int(0.85) = 0" in err,
     "a split holding out no file is refused (Keras: no training files)")
# --fast-decode departs from Keras on the 11x and 25x downscales
k = keras_call(keras.utils.image_dataset_from_directory, img_root,
               image_size=(64, 64), shuffle=False)[0]
files, items = keras_items(k, img_root)
t.tool("tfk-images", img_root, "-q", "--no-shuffle", "--image-size", "64x64",
       "--fast-decode", "-o", "fast")
fast = read_records(t.path("fast"))
i = files.index("cats/big420.jpg")
d = np.abs(np.frombuffer(fast[i]["image"][0], np.uint8).reshape(64, 64, 3)
           - items[i][0])
t.ok(d.mean() > 1.0, "--fast-decode is not Keras' pixels (720x477 -> 64x64: "
     "mean %.2f, max %.1f levels)" % (d.mean(), d.max()))


# --- text ----------------------------------------------------------------------
text_root = t.path("txt")
texts = {
    "neg/a.txt": "plain ascii review\n",
    "neg/b.txt": "caf\u00e9 \u2013 na\u00efve \u2603\n",
    "neg/sub/c.txt": "line one\r\nline two\r\n",
    "neg/empty.txt": "",
    "neg/D.TXT": "upper-case extension",
    "pos/1.txt": "great " * 40,
    "pos/2.txt": "\ttabs\tand  spaces  ",
    "pos/3.txt": "x",
    "pos/4.txt": "the end\n\n",
    "pos/notes.md": "not a .txt file",
}
for rel, s in texts.items():
    p = os.path.join(text_root, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "wb") as f:
        f.write(s.encode("utf-8"))


def keras_text_files(kw, sub):
    """The files text_dataset_from_directory reads (its datasets carry
    no file_paths): Keras' own index_directory and split."""
    from keras.src.utils import dataset_utils
    with contextlib.redirect_stdout(io.StringIO()):
        labels = kw.get("labels", "inferred")
        paths, _, _ = dataset_utils.index_directory(
            text_root, None if labels is None else labels,
            formats=(".txt",), class_names=kw.get("class_names"),
            shuffle=kw.get("shuffle", True), seed=kw.get("seed"),
            verbose=False)
        if sub != "all":
            paths, _ = dataset_utils.get_training_or_validation_split(
                paths, None, kw["validation_split"], sub)
    return [os.path.relpath(p, text_root) for p in paths]


def text_case(what, kw, args, order):
    subsets = ["training", "validation"] if kw.get("subset") == "both" else \
        [kw.get("subset") or "all"]
    kds = keras_call(keras.utils.text_dataset_from_directory, text_root, **kw)
    mine = ours("tfk-text", text_root, args, subsets)
    for sub, ds in zip(subsets, kds):
        files = keras_text_files(kw, sub)
        items = [(x.numpy(), None if y is None else y.numpy()) for x, y in
                 (el if isinstance(el, tuple) else (el, None) for el in ds)]
        recs = mine[sub]
        names = [r["filename"][0].decode() for r in recs]
        t.eq(names, files, "text %s, %s: Keras' files in its order" %
             (what, sub))
        pairs = sorted((r["text"][0], str(label_of(r, kw))) for r in recs)
        kp = sorted((bytes(x), str(None if y is None else
                                   np.asarray(y).tolist())) for x, y in items)
        t.eq(pairs, kp, "text %s, %s: the same text bytes and labels" %
             (what, sub))
        if order:
            t.eq([r["text"][0] for r in recs], [bytes(x) for x, _ in items],
                 "text %s, %s: in Keras' yield order" % (what, sub))


text_case("no shuffle", dict(shuffle=False), ["--no-shuffle"], True)
text_case("subset both, seed 3",
          dict(seed=3, validation_split=0.34, subset="both"),
          ["--seed", "3", "--validation-split", "0.34", "--subset", "both"],
          False)
text_case("validation, seed 9", dict(seed=9, validation_split=0.5,
                                     subset="validation"),
          ["--seed", "9", "--validation-split", "0.5", "--subset",
           "validation"], False)
text_case("class_names pos,neg, categorical, max_length 12",
          dict(shuffle=False, class_names=["pos", "neg"],
               label_mode="categorical", max_length=12),
          ["--no-shuffle", "--class-names", "pos,neg", "--label-mode",
           "categorical", "--max-length", "12"], True)
text_case("binary", dict(shuffle=False, label_mode="binary"),
          ["--no-shuffle", "--label-mode", "binary"], True)
with open(t.path("tlabels.txt"), "w") as f:
    f.write("".join("%d\n" % v for v in (1, 0, 1, 1, 0, 0, 1, 0, 1)))
text_case("labels list, binary, seed 4",
          dict(labels=[1, 0, 1, 1, 0, 0, 1, 0, 1], label_mode="binary",
               seed=4),
          ["--label-list", t.path("tlabels.txt"), "--label-mode", "binary",
           "--seed", "4"], False)
text_case("labels none", dict(shuffle=False, labels=None),
          ["--no-shuffle", "--labels", "none"], True)
t.done()
