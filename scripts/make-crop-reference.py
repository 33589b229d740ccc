#!/usr/bin/python3
"""References for Tandem's random resized crop (wasm/src/crop.c), with Debian's torchvision and PIL:
- crop-stats.torchvision.json: quantiles of torchvision's own RandomResizedCrop.get_params draws
  (area share, log aspect ratio, box centre) for a few image sizes, and the shares of 20000 more
  draws below fixed area and ratio thresholds, to compare Tandem's sampler with;
- photo-landscape.jpg.rrc.json and .rrc<seed>.rgb: for a few seeds, the box Tandem's sampler must
  draw (the same arithmetic, ported below) and torchvision's resized_crop + hflip of it on PIL.
Usage: make-crop-reference.py OUT_DIR (photo-landscape.jpg must be there). Skips what exists."""
import json
import math
import os
import sys

import torch
from PIL import Image
from torchvision.transforms import RandomResizedCrop

SIZES = [(500, 375), (375, 500), (1000, 100), (224, 224)]
DRAWS = 4000
QUANTILES = [0.1, 0.25, 0.5, 0.75, 0.9]
SEEDS = [1, 2, 3, 4, 5, 6]
TAIL_DRAWS = 20000
AREA_THRESHOLDS = [0.085, 0.09, 0.1, 0.12, 0.15, 0.2, 0.3, 0.5, 0.75, 0.9, 0.99]
LOG_RATIO_THRESHOLDS = [-0.25, -0.15, -0.05, 0.05, 0.15, 0.25]


def quantiles(values):
    ordered = sorted(values)
    return [ordered[min(len(ordered) - 1, int(q * len(ordered)))] for q in QUANTILES]


def describe(boxes, width, height):
    """boxes: (top, left, h, w) as get_params returns them."""
    return {
        "area": quantiles([w * h / (width * height) for _, _, h, w in boxes]),
        "logRatio": quantiles([math.log(w / h) for _, _, h, w in boxes]),
        "centreX": quantiles([(left + w / 2) / width for _, left, _, w in boxes]),
        "centreY": quantiles([(top + h / 2) / height for top, _, h, _ in boxes]),
        "whole": sum(1 for _, _, h, w in boxes if w == width and h == height) / len(boxes),
    }


def shares_below(values, thresholds):
    return [sum(1 for v in values if v < t) / len(values) for t in thresholds]


def torchvision_stats():
    torch.manual_seed(0)
    out = {"draws": DRAWS, "quantiles": QUANTILES, "sizes": []}
    for width, height in SIZES:
        image = torch.empty(3, height, width)
        boxes = [RandomResizedCrop.get_params(image, [0.08, 1.0], [3 / 4, 4 / 3]) for _ in range(DRAWS)]
        out["sizes"].append({"width": width, "height": height, **describe(boxes, width, height)})
    # The distribution's shape, tails included: the share of draws below each threshold, from more
    # draws, for a two-proportion test fine enough to tell a scale floor of 0.10 from 0.08.
    torch.manual_seed(1)
    out["tail"] = {"draws": TAIL_DRAWS, "areaThresholds": AREA_THRESHOLDS, "logRatioThresholds": LOG_RATIO_THRESHOLDS}
    for entry in out["sizes"]:
        width, height = entry["width"], entry["height"]
        image = torch.empty(3, height, width)
        boxes = [RandomResizedCrop.get_params(image, [0.08, 1.0], [3 / 4, 4 / 3]) for _ in range(TAIL_DRAWS)]
        entry["areaBelow"] = shares_below([w * h / (width * height) for _, _, h, w in boxes], AREA_THRESHOLDS)
        entry["logRatioBelow"] = shares_below([math.log(w / h) for _, _, h, w in boxes], LOG_RATIO_THRESHOLDS)
    return out


class Draws:
    """crop.c's counter-based generator, in 32-bit arithmetic."""

    def __init__(self, seed):
        self.seed = seed & 0xFFFFFFFF
        self.index = 0

    def uniform(self):
        self.index += 1
        z = (self.seed + 0x9E3779B9 * self.index) & 0xFFFFFFFF
        z = ((z ^ (z >> 16)) * 0x85EBCA6B) & 0xFFFFFFFF
        z = ((z ^ (z >> 13)) * 0xC2B2AE35) & 0xFFFFFFFF
        z ^= z >> 16
        return (z >> 8) * (1.0 / 16777216.0)

    def below(self, n):
        return min(int(self.uniform() * n), n - 1)


def tandem_box(seed, width, height, scale=(0.08, 1.0), ratio=(3 / 4, 4 / 3), flip=0.5):
    d = Draws(seed)
    lo, hi = math.log(ratio[0]), math.log(ratio[1])
    for _ in range(10):
        target = width * height * (scale[0] + d.uniform() * (scale[1] - scale[0]))
        r = math.exp(lo + d.uniform() * (hi - lo))
        w, h = round(math.sqrt(target * r)), round(math.sqrt(target / r))
        if 0 < w <= width and 0 < h <= height:
            y = d.below(height - h + 1)
            x = d.below(width - w + 1)
            return x, y, w, h, d.uniform() < flip
    raise SystemExit("these seeds should not need the fallback")


def main():
    out = sys.argv[1]
    path = os.path.join(out, "crop-stats.torchvision.json")
    if not os.path.exists(path):
        with open(path + ".tmp", "w") as f:
            json.dump(torchvision_stats(), f)
        os.replace(path + ".tmp", path)
        print(f"[fixtures] made {path} (torchvision RandomResizedCrop draws)")
    photo = os.path.join(out, "photo-landscape.jpg")
    path = photo + ".rrc.json"
    if not os.path.exists(path):
        im = Image.open(photo).convert("RGB")
        cases = []
        for seed in SEEDS:
            x, y, w, h, flipped = tandem_box(seed, *im.size)
            # torchvision.transforms.functional.resized_crop then hflip, on a PIL image.
            crop = im.crop((x, y, x + w, y + h)).resize((224, 224), Image.BILINEAR)
            if flipped:
                crop = crop.transpose(Image.FLIP_LEFT_RIGHT)
            with open(f"{photo}.rrc{seed}.rgb", "wb") as f:
                f.write(crop.tobytes())
            cases.append({"seed": seed, "x": x, "y": y, "width": w, "height": h, "flipped": flipped})
        with open(path + ".tmp", "w") as f:
            json.dump(cases, f)
        os.replace(path + ".tmp", path)
        print(f"[fixtures] made {path} and torchvision's resized crops of it")


main()
