#!/bin/sh
# t0900-images.sh - tfk-images: pixels against independent decoders
# (Pillow for PNG/GIF/BMP, djpeg for JPEG), resizing against numpy models
# of TF's formulas (tests/py/images.py), crops, color modes, JPEG/PNG
# re-encoding read back by Pillow, TF's full decode by default and the
# DCT-scaled one (--fast-decode) only on request, --pad-to-aspect-ratio, bad files skipped and counted or --strict errors, -j and archive
# outputs byte-identical to the directory's, Keras' split, usage errors.
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1
mkdir -p out

# --- a small corpus (Pillow) ----------------------------------------------
$PYTHON - <<'EOF'
import os, sys
import numpy as np
from PIL import Image
sys.path.insert(0, os.environ["TESTS"] + "/py")
import images
os.makedirs("d/cat/sub", exist_ok=True)
os.makedirs("d/dog", exist_ok=True)
os.makedirs("d/.thumbs", exist_ok=True)
a = images.synth(31, 47, 3, 1)
Image.fromarray(a).save("d/cat/a.png")
Image.fromarray(images.synth(64, 80, 3, 2)).save("d/cat/b.JPG", quality=90)
Image.fromarray(images.synth(20, 20, 3, 3)).save("d/cat/sub/c.bmp")
g = Image.fromarray((images.synth(25, 30, 1, 4)[..., 0] // 32).astype(np.uint8), "P")
g.putpalette(images.synth(8, 1, 3, 5).reshape(-1).tolist())
g.save("d/dog/d.gif")
Image.fromarray(images.synth(600, 800, 3, 6)).save("d/dog/big.jpg", quality=90)
rgba = np.concatenate([images.synth(16, 24, 3, 7), images.synth(16, 24, 1, 8)], -1)
Image.fromarray(rgba, "RGBA").save("d/dog/e.png")
Image.fromarray(a).save("d/.thumbs/x.png")
open("d/dog/notes.txt", "w").write("not an image")
# bad files, in their own tree
os.makedirs("bad/x", exist_ok=True)
Image.fromarray(a).save("bad/x/good.png")
open("bad/x/empty.jpg", "wb").close()
open("bad/x/text.png", "wb").write(b"hello, not a png")
data = open("d/cat/b.JPG", "rb").read()
open("bad/x/trunc.jpg", "wb").write(data[:len(data) // 2])
png = bytearray(open("d/cat/a.png", "rb").read())
png[len(png) - 13] ^= 0xff  # the IDAT crc (IEND is the last 12 bytes)
open("bad/x/crc.png", "wb").write(bytes(png))
EOF

# dump.py FILE: one line per record: filename label HxWxC image-bytes
cat > dump.py <<'EOF2'
import os, sys
sys.path.insert(0, os.environ["TESTS"] + "/py")
import tfexample as tfe
for r in tfe.read_tfrecords(sys.argv[1]):
    d = tfe.example_to_dict(tfe.Example.FromString(r))
    print("%s %s %dx%dx%d %d" % (d["filename"][1][0].decode(),
          ",".join(map(str, d.get("label", ("", []))[1])),
          d["height"][1][0], d["width"][1][0], d["channels"][1][0],
          len(d["image"][1][0])))
EOF2
# check.py: every pixel check in one process (numpy and Pillow load
# once). Lines of "KEY RECORDS NAME KIND SRC H W C [ARGS]" on stdin;
# prints "KEY VALUE" where VALUE is the largest absolute difference
# between the record's image and the oracle:
#   pil     Pillow's decode converted to the channels
#   djpeg   libjpeg-turbo's djpeg with TF's default IFAST DCT
#   resize  numpy model of tf.image.resize (ARGS: METHOD AA [Y,X,H,W]
#           crop box first), float result rounded
#   png     the record's image is a PNG: decoded by Pillow vs SRC's raw
#           record image (SRC = RECORDS2:NAME)
#   raw     the other record's raw image (SRC = RECORDS2)
#   psnr    record's JPEG decoded by Pillow vs SRC (RECORDS2) raw: dB
cat > check.py <<'EOF2'
import io, os, sys
import numpy as np
from PIL import Image
sys.path.insert(0, os.environ["TESTS"] + "/py")
import images
import tfexample as tfe
cache = {}
def image(path, name):
    if path not in cache:
        cache[path] = {}
        for r in tfe.read_tfrecords(path):
            d = tfe.example_to_dict(tfe.Example.FromString(r))
            cache[path][d["filename"][1][0].decode()] = d["image"][1][0]
    return cache[path][name]
for line in sys.stdin:
    f = line.split()
    if not f:
        continue
    key, recs, name, kind, src = f[:5]
    h, w, c = map(int, f[5:8])
    args = f[8:]
    b = image(recs, name)
    mode = {1: "L", 3: "RGB", 4: "RGBA"}[c]
    if kind in ("png", "psnr"):
        got = np.asarray(Image.open(io.BytesIO(b))).reshape(h, w, c)
    else:
        got = np.frombuffer(b, np.uint8).reshape(h, w, c)
    got = got.astype(np.float64)
    if kind == "pil":
        want = np.asarray(Image.open(src).convert(mode))
    elif kind == "djpeg":
        want = images.djpeg(src, ["-dct", "fast"])
    elif kind == "resize":
        img = np.asarray(Image.open(src).convert("RGB"))
        if len(args) > 2:
            y, x, ch, cw = map(int, args[2].split(","))
            img = img[y:y + ch, x:x + cw]
        r = images.resize(img, h, w, args[0], int(args[1]))
        want = np.clip(np.floor(np.asarray(r, np.float64) + 0.5), 0, 255)
    elif kind == "pad":
        img = np.asarray(Image.open(src).convert("RGB"))
        y, x, ph, pw = map(int, args[2].split(","))
        r = images.resize(img, ph, pw, args[0], int(args[1]))
        want = np.zeros((h, w, c))
        want[y:y + ph, x:x + pw] = np.clip(np.floor(np.asarray(r, np.float64) + 0.5), 0, 255)
    elif kind == "djpeg-resize":
        r = images.resize(images.djpeg(src, ["-dct", "fast"]), h, w, args[0], int(args[1]))
        want = np.clip(np.floor(np.asarray(r, np.float64) + 0.5), 0, 255)
    elif kind == "djpeg-pad":
        y, x, ph, pw = map(int, args[2].split(","))
        r = images.resize(images.djpeg(src, ["-dct", "fast"]), ph, pw, args[0], int(args[1]))
        want = np.zeros((h, w, c))
        want[y:y + ph, x:x + pw] = np.clip(np.floor(np.asarray(r, np.float64) + 0.5), 0, 255)
    elif kind in ("png", "raw", "psnr"):
        want = np.frombuffer(image(src, name), np.uint8)
    want = np.asarray(want, np.float64).reshape(h, w, c)
    d = np.abs(got - want)
    if kind == "psnr":
        print(key, int(10 * np.log10(255 ** 2 / (d ** 2).mean())))
    elif kind == "raw":
        print(key, "%d %.2f" % (d.max(), d.mean()))
    else:
        print(key, int(d.max()))
EOF2
# val KEY: check.py's value for KEY
mkdir -p bin
printf '#!/bin/sh\nsed -n "s/^$1 //p" "$T/res"\n' > bin/val
chmod +x bin/val
PATH="$T/bin:$PATH"
export T

# --- usage ----------------------------------------------------------------
testcmd "--help shows an example" 'tfk-images --help | grep -c "^  tfk-images flower_photos.tgz"' "1"
testerr "no directory" 'tfk-images' 2 "a DIR or ARCHIVE is required"
testerr "bad size" 'tfk-images --image-size 0x5 d' 2 "--image-size: expected HxW"
testerr "bad size text" 'tfk-images --image-size 12xq d' 2 "--image-size: expected HxW"
testerr "unknown interpolation" 'tfk-images --interpolation lanczos3 d' 2 "--interpolation: expected bilinear"
testerr "unknown color mode" 'tfk-images --color-mode cmyk d' 2 "--color-mode: expected grayscale, rgb or rgba"
testerr "JPEG has no alpha" 'tfk-images --color-mode rgba --encoding jpeg d' 2 "--encoding jpeg holds no alpha"
testerr "crop and pad" 'tfk-images --crop-to-aspect-ratio --pad-to-aspect-ratio d' 2 "exclude each other"
testerr "fast and exact" 'tfk-images --fast-decode --exact d' 2 "--fast-decode and --exact exclude each other"
testerr "quality range" 'tfk-images --quality 0 d' 2 "--quality: expected 1 to 100"
testerr "split without subset" 'tfk-images --validation-split 0.2 d' 2 "go together"
testerr "both needs -o" 'tfk-images --validation-split 0.2 --subset both d' 2 "needs -o PREFIX"
testerr "not a dataset" 'tfk-images dump.py' 1 "dump.py: not a directory nor a tar or zip archive"
mkdir -p none/c
testerr "no images" 'tfk-images none' 1 "none: no images found"

# --- records --------------------------------------------------------------
tfk-images d --image-size 20x30 --no-shuffle -o out/s 2>err
testcmd "one record per image, Keras order, labels, shapes" "$PYTHON dump.py out/s-00000-of-00001.tfrecord" \
	"cat/a.png 0 20x30x3 1800\ncat/b.JPG 0 20x30x3 1800\ncat/sub/c.bmp 0 20x30x3 1800\ndog/big.jpg 1 20x30x3 1800\ndog/d.gif 1 20x30x3 1800\ndog/e.png 1 20x30x3 1800"
testcmd "summary" "grep -c 'wrote 6 records (0 skipped), [0-9]* bytes, 1 shard to out/s in' err" "1"
testcmd "schema: shape, dtype, encoding, names" \
	"$PYTHON -c 'import json; f = json.load(open(\"out/s.schema.json\"))[\"features\"]; print(f[\"image\"][\"shape\"], f[\"image\"][\"dtype\"], f[\"image\"][\"encoding\"], f[\"label\"][\"label_names\"], f[\"height\"][\"shape\"], sorted(f))'" \
	"[20, 30, 3] uint8 raw ['cat', 'dog'] [] ['channels', 'filename', 'height', 'image', 'label', 'width']"

# --- pixels: decoders, resizing, encodings ---------------------------------------
# every run first, then one check.py over all of them
tfk-images -q d --exact --image-size 31x47 > out/n31.tfrecord
tfk-images -q d --exact --image-size 64x80 > out/n64.tfrecord
tfk-images -q d --image-size 20x20 > out/n20.tfrecord
tfk-images -q d --image-size 25x30 > out/n25.tfrecord
tfk-images -q d --image-size 16x24 --color-mode rgba > out/n16.tfrecord
tfk-images -q d --image-size 31x47 --color-mode grayscale > out/g31.tfrecord
: > cases
for m in bilinear nearest bicubic area; do
	for aa in 0 1; do
		flag=; [ $aa = 1 ] && flag=--antialias
		tfk-images -q d --image-size 13x19 --interpolation $m $flag > out/r-$m-$aa.tfrecord
		echo "r-$m-$aa out/r-$m-$aa.tfrecord cat/a.png resize d/cat/a.png 13 19 3 $m $aa" >> cases
	done
done
tfk-images -q d --image-size 50x70 > out/up.tfrecord
# Keras smart_resize box for 31x47 -> 10x10: side 31, x = int((47-31)/2) = 8
tfk-images -q d --image-size 10x10 --crop-to-aspect-ratio > out/crop.tfrecord
tfk-images -q d --image-size 150x200 --fast-decode > out/fast.tfrecord
tfk-images -q d --image-size 150x200 > out/exact.tfrecord
tfk-images -q d --image-size 150x200 --exact > out/exact2.tfrecord
# tf.image.resize_with_pad of 31x47 to 20x20: ratio 47/20, 13x20 at row 3;
# of 25x30 (d.gif) to 40x10: ratio 3, 8x10 at row floor(15.83) = 15
tfk-images -q d --image-size 20x20 --pad-to-aspect-ratio > out/pad.tfrecord
tfk-images -q d --image-size 40x10 --pad-to-aspect-ratio > out/pad2.tfrecord
tfk-images -q d --image-size 20x20 --pad-to-aspect-ratio --fast-decode > out/padf.tfrecord
tfk-images -q d --image-size 20x30 --encoding png -o out/png
tfk-images -q d --image-size 20x30 -o out/raw
tfk-images -q d --image-size 64x80 --exact --encoding jpeg --quality 90 > out/j90.tfrecord
tfk-images -q d --image-size 64x80 --encoding jpeg --quality 20 --color-mode grayscale > out/j20.tfrecord
cat >> cases <<'EOF2'
png out/n31.tfrecord cat/a.png pil d/cat/a.png 31 47 3
jpeg out/n64.tfrecord cat/b.JPG djpeg d/cat/b.JPG 64 80 3
bmp out/n20.tfrecord cat/sub/c.bmp pil d/cat/sub/c.bmp 20 20 3
gif out/n25.tfrecord dog/d.gif pil d/dog/d.gif 25 30 3
rgba out/n16.tfrecord dog/e.png pil d/dog/e.png 16 24 4
gray out/g31.tfrecord cat/a.png pil d/cat/a.png 31 47 1
up out/up.tfrecord cat/a.png resize d/cat/a.png 50 70 3 bilinear 0
crop out/crop.tfrecord cat/a.png resize d/cat/a.png 10 10 3 bilinear 0 0,8,31,31
nocrop out/crop.tfrecord cat/a.png resize d/cat/a.png 10 10 3 bilinear 0
fast out/fast.tfrecord dog/big.jpg raw out/exact.tfrecord 150 200 3
exact out/exact.tfrecord dog/big.jpg djpeg-resize d/dog/big.jpg 150 200 3 bilinear 0
pad out/pad.tfrecord cat/a.png pad d/cat/a.png 20 20 3 bilinear 0 3,0,13,20
pad2 out/pad2.tfrecord dog/d.gif pad d/dog/d.gif 40 10 3 bilinear 0 15,0,8,10
padbig out/pad.tfrecord dog/big.jpg djpeg-pad d/dog/big.jpg 20 20 3 bilinear 0 2,0,15,20
padfast out/padf.tfrecord dog/big.jpg raw out/pad.tfrecord 20 20 3
pngenc out/png-00000-of-00001.tfrecord dog/d.gif png out/raw-00000-of-00001.tfrecord 20 30 3
jpegenc out/j90.tfrecord cat/b.JPG psnr out/n64.tfrecord 64 80 3
EOF2
$PYTHON check.py < cases > res
testcmd "PNG pixels = Pillow's" "val png" "0"
testcmd "JPEG pixels (--exact) = djpeg -dct fast" "val jpeg" "0"
testcmd "BMP pixels = Pillow's" "val bmp" "0"
testcmd "GIF pixels = Pillow's" "val gif" "0"
testcmd "RGBA PNG, --color-mode rgba = Pillow's" "val rgba" "0"
testcmd "grayscale: one channel, within 1 of Pillow's L" "val gray | awk '{print (\$1 <= 1)}'" "1"
for m in bilinear nearest bicubic area; do
	for aa in 0 1; do
		testcmd "31x47 -> 13x19 $m antialias=$aa: within 1 of TF's float result" \
			"val r-$m-$aa | awk '{print (\$1 <= 1)}'" "1"
	done
done
testcmd "upscaling bilinear 31x47 -> 50x70" "val up | awk '{print (\$1 <= 1)}'" "1"
testcmd "--crop-to-aspect-ratio: centered square, then resize" "val crop | awk '{print (\$1 <= 1)}'" "1"
testcmd "  not the uncropped resize" "val nocrop | awk '{print (\$1 > 10)}'" "1"
testcmd "600x800 -> 150x200 by default: TF's resize of the full decode" "val exact | awk '{print (\$1 <= 1)}'" "1"
check "  --exact (the default) gives the same bytes" cmp out/exact.tfrecord out/exact2.tfrecord
testcmd "  --fast-decode: DCT-scaled, close but not equal (0 < max < 40, mean < 2)" \
	"val fast | awk '{print (\$1 > 0 && \$1 < 40 && \$2 < 2)}'" "1"
testcmd "--pad-to-aspect-ratio: 13x20 resize at row 3, zeros around" "val pad | awk '{print (\$1 <= 1)}'" "1"
testcmd "  40x10: 8x10 at row 15" "val pad2 | awk '{print (\$1 <= 1)}'" "1"
testcmd "  600x800 JPEG to 20x20: 15x20 at row 2, full decode" "val padbig | awk '{print (\$1 <= 1)}'" "1"
testcmd "  with --fast-decode: the same window, pixels near" "val padfast | awk '{print (\$1 > 0 && \$1 < 60)}'" "1"
testcmd "--encoding png: Pillow reads back the raw pixels" "val pngenc" "0"
testcmd "--encoding jpeg: close to the raw pixels (PSNR > 30 dB)" "val jpegenc | awk '{print (\$1 > 30)}'" "1"
testcmd "  schema says png" "$PYTHON -c 'import json; f = json.load(open(\"out/png.schema.json\"))[\"features\"][\"image\"]; print(f[\"encoding\"], f[\"content\"], f[\"shape\"])'" "png png [20, 30, 3]"
testcmd "  JPEGs as asked: size, mode, quality" "$PYTHON -c '
import io, os, sys
from PIL import Image
sys.path.insert(0, os.environ[\"TESTS\"] + \"/py\")
import tfexample as tfe
def get(p):
    for r in tfe.read_tfrecords(p):
        d = tfe.example_to_dict(tfe.Example.FromString(r))
        if d[\"filename\"][1][0] == b\"cat/b.JPG\":
            return d[\"image\"][1][0]
a, b = get(\"out/j90.tfrecord\"), get(\"out/j20.tfrecord\")
i, j = Image.open(io.BytesIO(a)), Image.open(io.BytesIO(b))
print(i.format, i.size, i.mode, j.mode, len(b) < len(a))'" "JPEG (80, 64) RGB L True"

# --- bad files ------------------------------------------------------------------
tfk-images bad --image-size 8x8 -o out/bad 2>err
testcmd "bad files skipped and counted" "grep -c 'wrote 1 records (4 skipped)' err" "1"
testcmd "  each named with its reason" "grep -c 'skipped\$' err" "4"
testcmd "  empty file" "grep -c 'tfk-images: bad/x/empty.jpg: .*empty' err" "1"
testcmd "  not an image" "grep -c 'tfk-images: bad/x/text.png: not an image' err" "1"
testcmd "  truncated JPEG" "grep -c 'tfk-images: bad/x/trunc.jpg: .*premature end' err" "1"
testcmd "  PNG with a bad crc" "grep -c 'tfk-images: bad/x/crc.png: png: .*crc error: skipped' err" "1"
testcmd "  the good one written" "$PYTHON dump.py out/bad-00000-of-00001.tfrecord" "x/good.png 0 8x8x3 192"
testerr "--strict: an error" 'tfk-images --strict bad --image-size 8x8 -o out/bad' 1 "tfk-images: bad/x/"
testcmd "  the earlier output untouched" "ls out | grep '^bad' | tr '\n' ' '" "bad-00000-of-00001.tfrecord bad.schema.json "
testerr "--strict, new prefix" 'tfk-images --strict bad --image-size 8x8 -o out/bad2' 1 "bad/x/"
testcmd "  leaves no output" "ls out | grep -c '^bad2' || true" "0"

# --- threads, archives, split ------------------------------------------------------
tfk-images -q d --image-size 40x40 --seed 5 -o out/j1
tfk-images -q d --image-size 40x40 --seed 5 -j 3 -o out/j3
check "-j 3 = -j 1, byte for byte" cmp out/j1-00000-of-00001.tfrecord out/j3-00000-of-00001.tfrecord
tar czf d.tgz d && zip -qr d.zip d && (cd d && tar cf ../flat.tar cat dog)
for a in d.tgz d.zip flat.tar; do
	tfk-images -q $a --image-size 40x40 --seed 5 -j 2 -o out/a
	check "$a: the directory's bytes" cmp out/a-00000-of-00001.tfrecord out/j1-00000-of-00001.tfrecord
done
tfk-images -q d --image-size 8x8 --seed 123 --validation-split 0.34 --subset both -o out/sp
testcmd "split: int(0.34 * 6) = 2 for validation, as Keras' shuffle" \
	"$PYTHON -c '
import numpy as np
f = [\"cat/a.png\", \"cat/b.JPG\", \"cat/sub/c.bmp\", \"dog/big.jpg\", \"dog/d.gif\", \"dog/e.png\"]
np.random.RandomState(123).shuffle(f)
print(\" \".join(f[:4]), \"|\", \" \".join(f[4:]))'" \
	"$($PYTHON dump.py out/sp-training-00000-of-00001.tfrecord | cut -d' ' -f1 | tr '\n' ' ')| $($PYTHON dump.py out/sp-validation-00000-of-00001.tfrecord | cut -d' ' -f1 | tr '\n' ' ' | sed 's/ $//')"
tfk-images -q d --image-size 8x8 --class-names dog --label-mode categorical --no-shuffle -o out/cn
testcmd "--class-names dog: that class only; --label-mode categorical: one-hot float" \
	"$PYTHON dump.py out/cn-00000-of-00001.tfrecord | cut -d' ' -f1,2 | tr '\n' ' '" \
	"dog/big.jpg 1.0 dog/d.gif 1.0 dog/e.png 1.0 "
tfk-images -q d --image-size 8x8 --labels none --no-shuffle > out/none.tfrecord
testcmd "--labels none: no label, hidden class directory included" \
	"$PYTHON dump.py out/none.tfrecord | cut -d' ' -f1,2 | tr '\n' ' '" \
	".thumbs/x.png  cat/a.png  cat/b.JPG  cat/sub/c.bmp  dog/big.jpg  dog/d.gif  dog/e.png  "

done_testing
