"""run_fuzz.py's "images" surface: encoded images inside a graph, through the image codec ops.

Seeds are GraphDefs holding one image (JPEG baseline and progressive, PNG 8 and 16-bit, GIF with
two frames, BMP; made with Pillow, as TensorFlow Serving clients send them) as a string Const
read by a decode op (DecodeImage, DecodeJpeg with its options, DecodeAndCropJpeg,
ExtractJpegShape, DecodePng, DecodeGif, DecodeBmp), the pixels encoded again by EncodePng or
EncodeJpeg. Mutations go at the image's bytes (flips, cuts, splices of another image) and at what
a decoder trusts: the width and height its header claims, its frame count; and sometimes at the
op's attrs. Each case runs `graphrun run model.pb`.
"""

import io
import os
import struct

from file_cases import cached_seeds, mutate_one_file, pack, unpack
from graph_mutations import mutate_bytes

from graphdef._proto import graph_pb2

SIZES = [0, 1, 2, 255, 256, 65535, 65500, 1 << 16, 1 << 24, 1 << 31, (1 << 32) - 1]


def _images():
    import numpy as np
    from PIL import Image
    rng = np.random.default_rng(7)
    rgb = Image.fromarray(rng.integers(0, 256, (19, 23, 3), dtype=np.uint8))
    grey16 = Image.fromarray(rng.integers(0, 65536, (9, 11), dtype=np.uint16))

    def save(picture, fmt, **options):
        out = io.BytesIO()
        picture.save(out, fmt, **options)
        return out.getvalue()

    frames = [rgb.convert("P"), rgb.rotate(90).convert("P")]
    gif = io.BytesIO()
    frames[0].save(gif, "GIF", save_all=True, append_images=frames[1:])
    return {"jpeg": save(rgb, "JPEG", quality=80), "progressive": save(rgb, "JPEG", progressive=True),
            "png": save(rgb.convert("RGBA"), "PNG"), "png16": save(grey16, "PNG"), "gif": gif.getvalue(),
            "bmp": save(rgb, "BMP")}


def _graph(image, op, attrs):
    import graphdef as gd
    graph = gd.Graph()
    with graph.as_default():
        contents = gd.constant(image, dtype=gd.string, name="image")
        if op == "crop":
            pixels = gd.image.decode_and_crop_jpeg(contents, gd.constant([2, 3, 9, 7], name="window"), **attrs)
        elif op == "shape":
            gd.image.extract_jpeg_shape(contents, name="shape")
            return graph.as_graph_def().SerializeToString()
        else:
            pixels = getattr(gd.image, op)(contents, **attrs)
        gd.identity(pixels, name="pixels")
        if op in ("decode_image", "decode_jpeg", "decode_png") and not attrs.get("dtype"):
            gd.image.encode_png(pixels, name="png")
    return graph.as_graph_def().SerializeToString()


def _make(_folder):
    import graphdef as gd
    images = _images()
    cases = [("jpeg", "decode_jpeg", {}), ("progressive", "decode_jpeg", {"ratio": 2, "fancy_upscaling": False}),
             ("jpeg", "decode_jpeg", {"dct_method": "INTEGER_ACCURATE", "try_recover_truncated": True,
                                      "acceptable_fraction": 0.5}),
             ("jpeg", "crop", {}), ("progressive", "shape", {}), ("png", "decode_png", {"channels": 3}),
             ("png16", "decode_png", {"dtype": gd.uint16}), ("gif", "decode_gif", {}), ("bmp", "decode_bmp", {}),
             ("gif", "decode_image", {"expand_animations": False}), ("png", "decode_image", {"channels": 1})]
    return [pack({"model.pb": _graph(images[kind], op, attrs)}) for kind, op, attrs in cases]


def seeds(cache):
    return cached_seeds(cache, _make)


def _lie(rng, data):
    """The image's header claiming another width, height or frame count."""
    data = bytearray(data)
    size = rng.choice(SIZES)
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24:
        at = rng.choice([16, 20])
        data[at:at + 4] = struct.pack(">I", size & 0xFFFFFFFF)
    elif data[:2] == b"\xff\xd8":
        at = max(data.find(b"\xff\xc0"), data.find(b"\xff\xc2"))
        if at >= 0 and at + 9 <= len(data):
            at += rng.choice([5, 7])
            data[at:at + 2] = struct.pack(">H", size & 0xFFFF)
    elif data[:3] == b"GIF" and len(data) >= 10:
        at = rng.choice([6, 8])
        data[at:at + 2] = struct.pack("<H", size & 0xFFFF)
    elif data[:2] == b"BM" and len(data) >= 26:
        at = rng.choice([18, 22])
        data[at:at + 4] = struct.pack("<I", rng.choice([size, -size]) & 0xFFFFFFFF)
    return bytes(data)


def _mutate_image(rng, node, others):
    tensor = node.attr["value"].tensor
    if not tensor.string_val:
        tensor.string_val.append(b"")
    data = tensor.string_val[0]
    what = rng.randrange(5)
    if what == 0:
        data = _lie(rng, data)
    elif what == 1:
        data = data[:rng.randrange(len(data) + 1)]
    elif what == 2 and others:
        other = rng.choice(others)
        at = rng.randrange(len(data) + 1)
        data = data[:at] + other[rng.randrange(len(other) + 1):]
    else:
        data = mutate_bytes(data, rng)
    tensor.string_val[0] = data[:4 << 20]


def _mutate_attr(rng, node):
    for key, values in (("channels", [0, 1, 2, 3, 4, 5, -1]), ("ratio", [1, 2, 3, 8, 0]),
                        ("acceptable_fraction", [0.0, 1.0, -1.0]), ("dtype", [4, 17, 1, 3])):
        if key in node.attr and rng.random() < 0.5:
            value = rng.choice(values)
            if key == "acceptable_fraction":
                node.attr[key].f = value
            elif key == "dtype":
                node.attr[key].type = value
            else:
                node.attr[key].i = value


def mutate_case(rng, blob):
    files = unpack(blob)
    graph_def = graph_pb2.GraphDef()
    try:
        graph_def.ParseFromString(files.get("model.pb", b""))
    except Exception:  # noqa: BLE001 - bytes an earlier mutation broke: mutate them further
        return pack(mutate_one_file(rng, files))
    images = [n for n in graph_def.node if n.op == "Const" and n.name == "image"]
    decoders = [n for n in graph_def.node if n.op.startswith(("Decode", "Extract", "Encode"))]
    if images and rng.random() < 0.8:
        others = [n.attr["value"].tensor.string_val[0] for n in images if n.attr["value"].tensor.string_val]
        _mutate_image(rng, images[0], others)
    elif decoders:
        _mutate_attr(rng, rng.choice(decoders))
    else:
        return pack(mutate_one_file(rng, files))
    files["model.pb"] = graph_def.SerializeToString(deterministic=True)
    return pack(files)


def run_case(blob, workdir, rng):
    from execute import run_graphrun
    from file_cases import write_tree
    folder = write_tree(workdir, unpack(blob))
    return run_graphrun(["run", os.path.join(folder, "model.pb")])
