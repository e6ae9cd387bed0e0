"""The seed article's listings run unchanged with `import graphdef as tf`."""

import subprocess
import sys
import textwrap

SEED_LISTING = """
    import graphdef as tf

    # create default graph
    tf.Graph().as_default()

    # construct computational graph by creating some nodes
    a = tf.Constant(15)
    b = tf.Constant(5)
    prod = tf.multiply(a, b)
    sum = tf.add(a, b)
    res = tf.divide(prod, sum)

    # create a session object
    session = tf.Session()

    # run computational graph to compute the output for 'res'
    out = session.run(res)
    print(out)
"""

TENSORFLOW_LISTING = """
    import graphdef as tf

    with tf.Session() as sess:
        a = tf.constant(15, name="a")
        b = tf.constant(5, name="b")
        prod = tf.multiply(a, b, name="Multiply")
        sum = tf.add(a, b, name="Add")
        res = tf.divide(prod, sum, name="Divide")
        out = sess.run(res)
        print(out)
"""


def _run(source, tmp_path):
    script = tmp_path / "listing.py"
    script.write_text(textwrap.dedent(source))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_seed_listing_prints_3_75(tmp_path):
    assert _run(SEED_LISTING, tmp_path) == "3.75\n"


def test_tensorflow_style_listing_prints_3_75(tmp_path):
    assert _run(TENSORFLOW_LISTING, tmp_path) == "3.75\n"


def test_seed_lazy_zeros_allocates_nothing(tmp_path):
    source = """
        import resource
        import graphdef as tf
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        a = tf.zeros([int(1e12), int(1e12)])
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(a.shape, after - before < 10_000)
    """
    assert _run(source, tmp_path) == "(1000000000000, 1000000000000) True\n"
