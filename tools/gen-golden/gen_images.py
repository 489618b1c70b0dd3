#!/usr/bin/env python3
"""Image fixtures for the runtime's image preprocessing (issue 12 item 4), from Hugging Face's own code.

Writes small synthetic test images (PNG and JPEG: RGB, RGBA, LA, grayscale, palette with tRNS, 1-bit,
16-bit gray and RGB, CMYK, progressive, EXIF orientations 2-8, odd sizes, wide and tall aspect ratios,
one larger than 896 px and a few far smaller) under test/Inputs/images/, then runs each through
transformers exactly as a user would -- `load_image(path)` (PIL open, EXIF transpose,
convert("RGB")) and the family's default image processor -- and records the results in
test/Inputs/images/golden.safetensors:

  decoded.<file>                      U8 [H, W, 3]: the RGB pixels the processors resize:
                                      load_image, then their convert_to_rgb (a tRNS colour -> white)
  <case>.pixel_values_u8              HF's pixel_values, encoded losslessly as uint8 (below)
  <case>.image_position_ids           Gemma 4: HF's I64 [1, max_patches, 2]
  <case>.num_soft_tokens_per_image    Gemma 4: HF's I64 [1]

The metadata names the versions, the processor classes and backends transformers picks by
default, and the cases, one a line: `<case> <file> gemma3 <size> <row_stride>` or
`<case> <file> gemma4 <patch> <budget> <patch_stride>` (a stride > 1 keeps every n-th pixel row
of each channel, or every n-th patch, so the default-size cases stay small).

Encoding: in transformers 5.24 both processors resize uint8 tensors and then apply one float32
operation, so every value is one of 256: Gemma 3 p = (u - 127.5) / 127.5, Gemma 4 p = u * f32(1/255).
The generator stores u and refuses to write unless decoding u that way gives HF's float32 tensor
bit for bit; the tests decode the same way.

  gen-golden --images            regenerate
  gen-golden --images --check    regenerate into a temp dir and compare (images byte for byte,
                                 golden.safetensors tensor for tensor: its metadata order varies)
"""

import argparse
import filecmp
import json
import os
import struct
import sys
import tempfile
import zlib

import numpy as np
import PIL
import PIL.Image
import torch
import torchvision
import transformers
from safetensors import safe_open
from safetensors.numpy import save_file
from transformers import Gemma3ImageProcessor, Gemma4ImageProcessor
from transformers.image_transforms import convert_to_rgb
from transformers.image_utils import load_image
from transformers.models.auto import image_processing_auto

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT_REL = os.path.join("test", "Inputs", "images")


def smooth(w, h, seed, channels=3, noise=12):
    """Gradients and blobs plus a little noise: compresses well, still exercises the filters."""
    rs = np.random.RandomState(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    planes = []
    for c in range(channels):
        fx, fy, ph = rs.uniform(0.5, 3.0), rs.uniform(0.5, 3.0), rs.uniform(0, 6.3)
        v = 127.5 + 100 * np.sin(2 * np.pi * (fx * x / w + fy * y / h) + ph)
        v += rs.normal(0, noise, size=(h, w))
        planes.append(v)
    # A hard edge: a bright square, so ringing of the cubic filter shows.
    a = np.stack(planes, -1)
    a[h // 4: h // 2, w // 4: w // 2, :] = 250
    return np.clip(np.rint(a), 0, 255).astype(np.uint8)


def png_raw(path, arr, color_type, depth, plte=None, trns=None):
    """A plain PNG writer for what PIL cannot write (16-bit RGB, packed gray, any tRNS)."""
    h, w = arr.shape[:2]
    if depth < 8:  # pack |arr| (one sample a pixel) into rows of bits, MSB first
        per = 8 // depth
        rows = []
        for r in range(h):
            v = np.zeros((w + per - 1) // per * per, dtype=np.uint8)
            v[:w] = arr[r]
            v = v.reshape(-1, per)
            rows.append(bytes(int(sum(int(x) << (8 - depth * (i + 1)) for i, x in enumerate(g))) for g in v))
        raw = b"".join(b"\0" + row for row in rows)
    else:
        dt = ">u2" if depth == 16 else np.uint8
        raw = b"".join(b"\0" + arr[r].astype(dt).tobytes() for r in range(h))

    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", w, h, depth, color_type, 0, 0, 0)
    extra = (chunk(b"PLTE", plte) if plte else b"") + (chunk(b"tRNS", trns) if trns else b"")
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + extra + chunk(b"IDAT", zlib.compress(raw, 9))
                + chunk(b"IEND", b""))


def exif_with_orientation(o):
    ex = PIL.Image.Exif()
    ex[0x0112] = o
    return ex.tobytes()


def write_images(d):
    """Writes the test images into |d|; returns their names in order."""
    names = []

    def save(name, im, **kw):
        im.save(os.path.join(d, name), **kw)
        names.append(name)

    save("rgb_37x53.png", PIL.Image.fromarray(smooth(37, 53, 1)), optimize=False, compress_level=9)
    rgba = np.concatenate([smooth(40, 30, 2), smooth(40, 30, 3, 1)], -1)
    save("rgba_40x30.png", PIL.Image.fromarray(rgba, "RGBA"), compress_level=9)
    save("gray_33x47.png", PIL.Image.fromarray(smooth(33, 47, 4, 1)[..., 0], "L"), compress_level=9)
    pal = PIL.Image.fromarray(smooth(45, 29, 5)).convert("P", palette=PIL.Image.Palette.ADAPTIVE, colors=16)
    save("palette_45x29.png", pal, transparency=3, compress_level=9)
    bits = (smooth(29, 13, 6, 1)[..., 0] > 127)
    save("gray1_29x13.png", PIL.Image.fromarray(bits), compress_level=9)
    g16 = (smooth(21, 17, 7, 1)[..., 0].astype(np.uint32) * 257) // 40  # values 0..1638: clamps
    save("gray16_21x17.png", PIL.Image.fromarray(g16.astype(np.uint16)), compress_level=9)
    rgb16 = smooth(19, 23, 8).astype(np.uint32) * 257 + np.random.RandomState(8).randint(0, 256, (23, 19, 3))
    png_raw(os.path.join(d, "rgb16_19x23.png"), np.minimum(rgb16, 65535), 2, 16)
    names.append("rgb16_19x23.png")
    # tRNS colour keys: HF's convert_to_rgb turns those pixels white (PIL's rules per PNG type).
    g8 = smooth(20, 12, 21, 1)[..., 0]
    png_raw(os.path.join(d, "trns_gray_20x12.png"), g8, 0, 8, trns=struct.pack(">H", int(g8[3, 5])))
    rgb8 = smooth(18, 14, 22)
    png_raw(os.path.join(d, "trns_rgb_18x14.png"), rgb8, 2, 8, trns=bytes([0, rgb8[2, 2, 0], 0, rgb8[2, 2, 1],
                                                                          0, rgb8[2, 2, 2]]))
    idx = smooth(16, 10, 23, 1)[..., 0] // 64
    plte = bytes([10, 20, 30, 200, 100, 50, 0, 0, 0, 255, 255, 0])
    png_raw(os.path.join(d, "trns_palette_alpha_16x10.png"), idx, 3, 2, plte=plte, trns=bytes([255, 128, 0, 255]))
    g2 = smooth(23, 9, 24, 1)[..., 0] // 64
    png_raw(os.path.join(d, "trns_gray2_23x9.png"), g2, 0, 2, trns=struct.pack(">H", 0))
    names += ["trns_gray_20x12.png", "trns_rgb_18x14.png", "trns_palette_alpha_16x10.png", "trns_gray2_23x9.png"]
    save("rgb_61x43.jpg", PIL.Image.fromarray(smooth(61, 43, 9)), quality=90)
    save("gray_35x27.jpg", PIL.Image.fromarray(smooth(35, 27, 10, 1)[..., 0], "L"), quality=90)
    cmyk = np.concatenate([smooth(24, 32, 11), smooth(24, 32, 12, 1) // 3], -1)
    save("cmyk_24x32.jpg", PIL.Image.fromarray(cmyk, "CMYK"), quality=92)
    save("progressive_50x38.jpg", PIL.Image.fromarray(smooth(50, 38, 13)), quality=85,
         progressive=True, subsampling=0)
    save("wide_600x8.png", PIL.Image.fromarray(smooth(600, 8, 14)), compress_level=9)
    save("tall_16x150.jpg", PIL.Image.fromarray(smooth(16, 150, 15)), quality=88)
    save("large_1000x700.jpg", PIL.Image.fromarray(smooth(1000, 700, 16, noise=4)), quality=60)
    save("tiny_5x7.png", PIL.Image.fromarray(smooth(5, 7, 17)), compress_level=9)
    save("exif6_30x20.jpg", PIL.Image.fromarray(smooth(30, 20, 18)), quality=90, exif=exif_with_orientation(6))
    save("exif8_25x18.png", PIL.Image.fromarray(smooth(25, 18, 19)), exif=exif_with_orientation(8),
         compress_level=9)
    save("exif5_14x22.jpg", PIL.Image.fromarray(smooth(14, 22, 20)), quality=90, exif=exif_with_orientation(5))
    # The other orientations, tiny; one EXIF block big-endian ("MM"), as cameras often write.
    for o in (2, 3, 4, 7):
        save(f"exif{o}_7x5.png", PIL.Image.fromarray(smooth(7, 5, 30 + o)), exif=exif_with_orientation(o),
             compress_level=9)
    be = b"Exif\0\0MM\0*" + struct.pack(">IH", 8, 1) + struct.pack(">HHIHH", 0x0112, 3, 1, 3, 0) + b"\0\0\0\0"
    save("exif3be_6x9.jpg", PIL.Image.fromarray(smooth(6, 9, 40)), quality=90, exif=be)
    la = np.concatenate([smooth(11, 9, 41, 1), smooth(11, 9, 42, 1)], -1)
    save("la_11x9.png", PIL.Image.fromarray(la, "LA"), compress_level=9)
    return names


def encode_g3(p):
    u = np.rint(p * 127.5 + 127.5).astype(np.int64)
    assert u.min() >= 0 and u.max() <= 255
    back = (torch.from_numpy(u).to(torch.float32) - 127.5) / 127.5
    assert torch.equal(back, torch.from_numpy(p)), "gemma3 pixels are not (u - 127.5) / 127.5"
    return u.astype(np.uint8)


def encode_g4(p):
    u = np.rint(p * 255.0).astype(np.int64)
    assert u.min() >= 0 and u.max() <= 255
    back = torch.from_numpy(u).to(torch.uint8) * (1 / 255)
    assert torch.equal(back, torch.from_numpy(p)), "gemma4 pixels are not u * f32(1/255)"
    return u.astype(np.uint8)


# (file, size, row stride); the Gemma 3 default 896 on three sizes of input.
G3_SMALL = 40
G3_DEFAULT = [("large_1000x700.jpg", 896, 128), ("rgb_37x53.png", 896, 128), ("exif6_30x20.jpg", 896, 128)]
# (file, patch, budget, patch stride)
G4_CASES = ([(n, 2, 70, 1) for n in ["rgb_37x53.png", "rgb_61x43.jpg", "cmyk_24x32.jpg", "wide_600x8.png", "tall_16x150.jpg",
                                     "tiny_5x7.png", "exif8_25x18.png", "large_1000x700.jpg", "trns_rgb_18x14.png"]]
            + [("rgb_37x53.png", 4, 140, 4), ("wide_600x8.png", 4, 140, 4), ("large_1000x700.jpg", 16, 280, 64)])


def generate(root):
    d = os.path.join(root, OUT_REL)
    os.makedirs(d, exist_ok=True)
    names = write_images(d)
    tensors, cases = {}, []
    for n in names:
        img = load_image(os.path.join(d, n))
        if img.width * img.height <= 64 * 64 or n.startswith(("wide", "tall")):
            rgb = convert_to_rgb(img, return_numpy=True)
            tensors[f"decoded.{n}"] = np.ascontiguousarray(np.asarray(rgb, dtype=np.uint8))

    def g3(n, size, stride):
        proc = Gemma3ImageProcessor(size={"height": size, "width": size}, do_pan_and_scan=False)
        pv = proc(images=load_image(os.path.join(d, n)), return_tensors="pt")["pixel_values"]
        assert pv.dtype == torch.float32 and tuple(pv.shape) == (1, 3, size, size)
        case = f"g3_{size}_{n}"
        tensors[f"{case}.pixel_values_u8"] = np.ascontiguousarray(encode_g3(pv.numpy())[:, :, ::stride, :])
        cases.append(f"{case} {n} gemma3 {size} {stride}")

    for n in names:
        g3(n, G3_SMALL, 1)
    for n, size, stride in G3_DEFAULT:
        g3(n, size, stride)
    for n, patch, budget, stride in G4_CASES:
        proc = Gemma4ImageProcessor(patch_size=patch, max_soft_tokens=budget, pooling_kernel_size=3)
        out = proc(images=load_image(os.path.join(d, n)), return_tensors="pt")
        pv, pos = out["pixel_values"], out["image_position_ids"]
        nst = out["num_soft_tokens_per_image"]
        nst = np.asarray(nst.tolist() if hasattr(nst, "tolist") else nst, dtype=np.int64).reshape(1)
        assert pv.dtype == torch.float32 and tuple(pv.shape) == (1, budget * 9, patch * patch * 3)
        case = f"g4_{patch}_{budget}_{n}"
        tensors[f"{case}.pixel_values_u8"] = np.ascontiguousarray(encode_g4(pv.numpy())[:, ::stride, :])
        tensors[f"{case}.image_position_ids"] = np.ascontiguousarray(pos.numpy().astype(np.int64))
        tensors[f"{case}.num_soft_tokens_per_image"] = nst
        cases.append(f"{case} {n} gemma4 {patch} {budget} {stride}")

    backend3 = image_processing_auto._resolve_backend(None, None, "Gemma3ImageProcessor")
    backend4 = image_processing_auto._resolve_backend(None, None, "Gemma4ImageProcessor")
    meta = {
        "generator": "tools/gen-golden/gen_images.py",
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "torchvision": torchvision.__version__,
        "pillow": PIL.__version__,
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "gemma3_processor": f"{Gemma3ImageProcessor.__name__} (auto backend: {backend3})",
        "gemma4_processor": f"{Gemma4ImageProcessor.__name__} (auto backend: {backend4})",
        "cases": "\n".join(cases),
    }
    save_file(tensors, os.path.join(d, "golden.safetensors"), metadata=meta)
    return meta


def same_file(x, y):
    """Byte equality, except that safetensors files compare by content: the writer orders the
    metadata differently from run to run."""
    if not x.endswith(".safetensors"):
        return filecmp.cmp(x, y, shallow=False)
    with safe_open(x, "np") as fx, safe_open(y, "np") as fy:
        if fx.metadata() != fy.metadata() or sorted(fx.keys()) != sorted(fy.keys()):
            return False
        return all(np.array_equal(fx.get_tensor(k), fy.get_tensor(k))
                   and fx.get_tensor(k).dtype == fy.get_tensor(k).dtype for k in fx.keys())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="regenerate into a temp dir and compare bytes")
    args = ap.parse_args()
    torch.set_num_threads(1)
    if not args.check:
        meta = generate(REPO)
        print(json.dumps({k: v for k, v in meta.items() if k != "cases"}, indent=1))
        print(f"{len(meta['cases'].splitlines())} cases written to {OUT_REL}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        generate(tmp)
        a, b = os.path.join(tmp, OUT_REL), os.path.join(REPO, OUT_REL)
        bad = [f for f in sorted(os.listdir(a)) if not os.path.exists(os.path.join(b, f))
               or not same_file(os.path.join(a, f), os.path.join(b, f))]
        if bad:
            print("differs from the committed fixtures: " + ", ".join(bad), file=sys.stderr)
            return 1
        print("image fixtures match")
    return 0


if __name__ == "__main__":
    sys.exit(main())
