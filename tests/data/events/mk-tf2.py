# mk-tf2.py DIR: the TF2 event file in tests/data/events/tf2 (tf.summary
# scalars as float32 tensors of the "scalars" plugin, histograms and text
# as tensors of theirs). Run with the TensorFlow env:
#   ~/.cache/tfkit/tfenv/bin/python tests/data/events/mk-tf2.py tests/data/events/tf2
import sys, tensorflow as tf
w = tf.summary.create_file_writer(sys.argv[1])
with w.as_default():
    for s in range(3):
        tf.summary.scalar("loss", 1.0 / (s + 3), step=s)
        tf.summary.scalar("lr", tf.constant(0.1 * (s + 1), tf.float64), step=s)
        tf.summary.histogram("w", [0.5, 1.5, float(s)], step=s)
        tf.summary.text("note", "hi", step=s)
w.close()
