#!/usr/bin/python3
"""Image fixtures for the decode tests, written with Debian's PIL (python3-pil, libjpeg-turbo,
libwebp): formats the project's own encoders do not write. For each image, the pixels it was made
from (.src.rgb / .src.rgba) and PIL's own decode of the file (.pil.rgb / .pil.rgba), raw HWC.
Usage: make-image-fixtures.py OUT_DIR. Skips files already there."""
import math
import os
import sys

from PIL import Image

W, H = 97, 61  # odd sizes: chroma subsampling and SIMD tails meet their edge cases


def pattern(seed: int) -> Image.Image:
    """Smooth gradients, flat blocks and a disc: lossy codecs stay close, orientation is obvious."""
    im = Image.new("RGB", (W, H))
    px = im.load()
    for y in range(H):
        for x in range(W):
            r = int(255 * x / (W - 1))
            g = int(255 * y / (H - 1))
            b = int(127 + 120 * math.sin((x + y + seed * 7) / 9))
            if x < W // 3 and y < H // 2:
                r, g, b = (230, 40, 40) if seed % 2 == 0 else (40, 40, 230)
            if (x - 70) ** 2 + (y - 35) ** 2 < 144:
                r, g, b = 250, 250, 60
            px[x, y] = (r, g, b)
    return im


def save(out: str, name: str, im: Image.Image, **kwargs) -> None:
    path = os.path.join(out, name)
    if os.path.exists(path):
        return
    im.save(path + ".tmp", format=kwargs.pop("format"), **kwargs)
    decoded = Image.open(path + ".tmp")
    decoded.seek(0)
    mode = "RGBA" if decoded.mode in ("RGBA", "LA") or "transparency" in decoded.info and im.mode == "RGBA" else "RGB"
    ext = "rgba" if mode == "RGBA" else "rgb"
    src = im
    with open(path + ".src." + ext, "wb") as f:
        f.write(src.convert(mode).tobytes())
    with open(path + ".pil." + ext, "wb") as f:
        f.write(decoded.convert(mode).tobytes())
    os.replace(path + ".tmp", path)
    print(f"[fixtures] made {path} ({decoded.format} {decoded.mode} {decoded.size[0]}x{decoded.size[1]})")


def photo_like(width: int, height: int) -> Image.Image:
    """Gradients, fine stripes, sharp-edged shapes: resampling differences show on every kind."""
    im = Image.new("RGB", (width, height))
    px = im.load()
    for y in range(height):
        for x in range(width):
            r = int(127 + 100 * math.sin(x / 13.0) * math.cos(y / 17.0))
            g = int(255 * x / (width - 1))
            b = 200 if (x // 9 + y // 9) % 2 == 0 else 60
            if (x - width // 3) ** 2 + (y - height // 2) ** 2 < (min(width, height) // 5) ** 2:
                r, g, b = 240, 230, 40
            px[x, y] = (r, g, b)
    return im


def torchvision_224(path: str) -> bytes:
    """torchvision's Resize(224) + CenterCrop(224) on a PIL image, written out in plain PIL."""
    im = Image.open(path).convert("RGB")
    w, h = im.size
    short, long = (w, h) if w <= h else (h, w)
    new_short, new_long = 224, int(224 * long / short)
    new_w, new_h = (new_short, new_long) if w <= h else (new_long, new_short)
    im = im.resize((new_w, new_h), Image.BILINEAR)
    left, top = int(round((new_w - 224) / 2.0)), int(round((new_h - 224) / 2.0))
    return im.crop((left, top, left + 224, top + 224)).tobytes()


def main() -> None:
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rgb = pattern(0)
    save(out, "progressive.jpg", rgb, format="JPEG", quality=92, progressive=True, subsampling=0)
    save(out, "progressive-420.jpg", rgb, format="JPEG", quality=92, progressive=True, subsampling=2)
    # PIL writes CMYK JPEGs the Adobe way (inverted, no colour transform): C = 255 - R, K = 0.
    save(out, "cmyk.jpg", rgb.convert("CMYK"), format="JPEG", quality=95)
    # And with black ink rising left to right, so the K channel scales every colour.
    c, m, y, _ = rgb.convert("CMYK").split()
    save(out, "cmyk-ink.jpg", Image.merge("CMYK", (c, m, y, Image.linear_gradient("L").rotate(90).resize((W, H)))), format="JPEG", quality=95)
    # Large and progressive: libavcodec's mjpeg (the path for a CMYK JPEG asked for one channel)
    # visits each block once per scan, which the scan-flood test needs many of. In large/, out of
    # the fuzz seeds' glob: one decode of it under ASan takes up to a second.
    os.makedirs(os.path.join(out, "large"), exist_ok=True)
    path = os.path.join(out, "large", "cmyk-progressive-2048.jpg")
    if not os.path.exists(path):
        ramp = Image.linear_gradient("L").resize((2048, 2048)).convert("RGB").convert("CMYK")
        ramp.save(path + ".tmp", format="JPEG", quality=90, progressive=True)
        os.replace(path + ".tmp", path)
        print(f"[fixtures] made {path} (progressive CMYK JPEG 2048x2048)")
    save(out, "lossy.webp", rgb, format="WEBP", quality=90, method=4)
    save(out, "lossless.webp", rgb, format="WEBP", lossless=True)
    rgba = rgb.copy()
    rgba.putalpha(Image.linear_gradient("L").resize((W, H)))
    save(out, "alpha.webp", rgba, format="WEBP", lossless=True)
    for name, size in (("photo-landscape.jpg", (500, 375)), ("photo-portrait.jpg", (331, 497))):
        path = os.path.join(out, name)
        if not os.path.exists(path):
            photo_like(*size).save(path + ".tmp", format="JPEG", quality=90)
            with open(path + ".tv224.rgb", "wb") as f:
                f.write(torchvision_224(path + ".tmp"))
            os.replace(path + ".tmp", path)
            print(f"[fixtures] made {path} (JPEG {size[0]}x{size[1]}) and torchvision's 224 crop of it")
    frames = [pattern(i).quantize(64, dither=Image.Dither.NONE) for i in range(3)]
    path = os.path.join(out, "three-frames.gif")
    if not os.path.exists(path):
        frames[0].save(path + ".tmp", format="GIF", save_all=True, append_images=frames[1:], duration=100, loop=0)
        decoded = Image.open(path + ".tmp")
        first = decoded.convert("RGB").tobytes()
        decoded.seek(1)
        second = decoded.convert("RGB").tobytes()
        with open(path + ".pil.rgb", "wb") as f:
            f.write(first)
        with open(path + ".second.rgb", "wb") as f:
            f.write(second)
        os.replace(path + ".tmp", path)
        print(f"[fixtures] made {path} (GIF, 3 frames {W}x{H})")


main()
