#!/usr/bin/python3
"""ImageNet-like JPEGs cut from real photographs, for bench/loader.ts.

Run with Debian's python3 (python3-pil):

    /usr/bin/python3 bench/corpus/make-photo-corpus.py --sources DIR --out OUT [--count 2000] [--seed 0] [--shape photos|imagenet|hard]

Every *.jpg under DIR (scripts/setup-bench.sh unpacks Debian's mate-backgrounds there) is a
source photograph and a class: OUT/<photo name>/<index>.jpg, an ImageFolder layout. Per image,
from random.Random seeded by (seed, index) — so the corpus is the same for a seed whatever
--jobs is:

- a size: with --shape photos (the default), an aspect ratio from 4:3, 3:4, 3:2, 2:3, 1:1, 16:9
  and a long side of 300–640 px (92%), 800–1600 px (5%) or 2500–3000 px (3%); with --shape
  imagenet, ImageNet's own mix: 500×375 (40%), 500×333 (20%), 375×500 (10%), 333×500 (5%),
  500×500 (5%), and 20% of any aspect above with a long side of 250–500 px; with --shape hard,
  an aspect ratio from the same list (uniformly: a third portrait, a sixth square) and a long
  side uniform over the lengths that keep the image within 800×600 (600×800 portrait) and at
  least 300 px long and 200 px short: 300–800 px for 4:3, 3:4, 3:2, 2:3, 300–600 for 1:1,
  355–800 for 16:9;
- a source photograph, uniformly among those large enough to hold that size;
- a crop of that aspect ratio at a random place and zoom (from the target size itself to the
  largest crop that fits), resized to the target with LANCZOS. With --shape hard, high-detail
  crops: the zoom at most 1.3× (near the photograph's own resolution, no heavy downscale that
  smooths it; at zoom 1 LANCZOS leaves the pixels as they are), and of 4 such crops
  drawn, the one with the most fine detail (the largest mean of PIL's FIND_EDGES over its
  grayscale). The choice matters: cut at their own resolution these photographs hold less detail
  per pixel than downscaled (an out-of-focus sky stays smooth; shrunk, the whole scene fills the
  frame), so the place is chosen for texture;
- an encoding, mixed like real collections: RGB 4:2:0 (85%), RGB 4:4:4 (5%), progressive 4:2:0
  (4%), grayscale (2%), CMYK (2%), 4:2:0 with an EXIF Orientation tag 6, 8 or 3 (2%; the pixels
  are stored turned so that applying the tag shows the intended crop); quality 75–95. With
  --shape hard, a mix made to be hard for a decoder: RGB 4:2:0 (66%), RGB 4:4:4 (25%: chroma at
  full resolution, twice the samples of 4:2:0), progressive (3%), grayscale (2%), CMYK (2%), EXIF
  orientation (2%); quality 90–95 (more coefficients survive quantisation: more Huffman work per
  pixel).

Each shape draws from a random stream of its own (its recipe name is in the seed), so adding a
shape moves none of the others' images.

Writes OUT/corpus.json (parameters, sources, mix counts, size histogram) and OUT/.complete; a
second run with the same parameters finds .complete and does nothing.
"""
import argparse
import hashlib
import json
import os
import random
import shutil
import sys
import time
from collections import Counter
from pathlib import Path

from PIL import Image, ImageFilter, ImageOps, ImageStat, __version__ as PIL_VERSION

RECIPE = 'photo-corpus/1'
RECIPE_IMAGENET = 'photo-corpus-imagenet/1'
RECIPE_HARD = 'photo-corpus-hard/1'
RECIPES = {'photos': RECIPE, 'imagenet': RECIPE_IMAGENET, 'hard': RECIPE_HARD}
HARD_BOUNDS = dict(long=(300, 800), short=(200, 600))  # px, landscape or portrait alike
HARD_MAX_ZOOM = 1.3  # crop size ÷ target size: near the photograph's own resolution
HARD_QUALITY = (90, 95)
HARD_CANDIDATES = 4  # places tried per image; the most detailed one is kept
IMAGENET_SIZES = [  # (cumulative probability, (width, height) or None for any aspect, long side 250-500)
    (0.40, (500, 375)),
    (0.60, (500, 333)),
    (0.70, (375, 500)),
    (0.75, (333, 500)),
    (0.80, (500, 500)),
    (1.00, None),
]
ASPECTS = [(4, 3), (3, 4), (3, 2), (2, 3), (1, 1), (16, 9)]
SIZE_BUCKETS = [  # (cumulative probability, long side range, name)
    (0.92, (300, 640), '300-640'),
    (0.97, (800, 1600), '800-1600'),
    (1.00, (2500, 3000), '2500-3000'),
]
ENCODINGS = [  # (cumulative probability, name)
    (0.85, 'rgb420'),
    (0.90, 'rgb444'),
    (0.94, 'progressive'),
    (0.96, 'gray'),
    (0.98, 'cmyk'),
    (1.00, 'exif-orientation'),
]
ENCODINGS_HARD = [  # (cumulative probability, name)
    (0.66, 'rgb420'),
    (0.91, 'rgb444'),
    (0.94, 'progressive'),
    (0.96, 'gray'),
    (0.98, 'cmyk'),
    (1.00, 'exif-orientation'),
]
# Stored pixels for an Orientation tag: ImageOps.exif_transpose undoes these.
STORE_FOR_ORIENTATION = {6: Image.Transpose.ROTATE_90, 8: Image.Transpose.ROTATE_270, 3: Image.Transpose.ROTATE_180}
HIST_EDGES = [300, 400, 500, 641, 800, 1200, 1601, 2500, 3001]

sources = []  # [(class name, RGB image)], filled once per process


def pick(cumulative, r):
    for p, *value in cumulative:
        if r < p:
            return value
    return cumulative[-1][1:]


def detail(photo, box):
    """How much fine texture a crop holds: the mean of PIL's FIND_EDGES over its grayscale."""
    return ImageStat.Stat(photo.crop(box).convert('L').filter(ImageFilter.FIND_EDGES)).mean[0]


def plan(seed, index, shape='photos'):
    """Everything about image `index` except the pixels: deterministic for (seed, index, shape)."""
    rng = random.Random(f'{RECIPES[shape]}:{seed}:{index}')
    aw, ah = rng.choice(ASPECTS)
    if shape == 'imagenet':
        (fixed,) = pick(IMAGENET_SIZES, rng.random())
        (lo, hi), bucket = ((250, 500), 'imagenet-other') if fixed is None else ((max(fixed), max(fixed)), 'imagenet-fixed')
        if fixed is not None:
            aw, ah = fixed
    elif shape == 'hard':
        # The long sides whose short side (rounded as below) stays within the bounds too.
        ratio = min(aw, ah) / max(aw, ah)
        (long_lo, long_hi), (short_lo, short_hi) = HARD_BOUNDS['long'], HARD_BOUNDS['short']
        lo = next(n for n in range(long_lo, long_hi + 1) if round(n * ratio) >= short_lo)
        hi = next(n for n in range(long_hi, long_lo - 1, -1) if round(n * ratio) <= short_hi)
        bucket = 'hard-portrait' if aw < ah else 'hard-landscape' if aw > ah else 'hard-square'
    else:
        (lo, hi), bucket = pick(SIZE_BUCKETS, rng.random())
    long_side = rng.randint(lo, hi)
    if aw >= ah:
        tw, th = long_side, max(1, round(long_side * ah / aw))
    else:
        tw, th = max(1, round(long_side * aw / ah)), long_side
    fits = [k for k, (_, im) in enumerate(sources) if im.width >= tw and im.height >= th]
    if not fits:
        raise RuntimeError(f'image {index}: no source photograph holds {tw}×{th}')
    src = rng.choice(fits)
    sw, sh = sources[src][1].size
    largest = min(sw / tw, sh / th)
    if shape == 'hard':
        # Near the photograph's own resolution, at the most detailed of a few places.
        candidates = []
        for _ in range(HARD_CANDIDATES):
            zoom = rng.uniform(1.0, min(HARD_MAX_ZOOM, largest))
            cw, ch = min(sw, round(tw * zoom)), min(sh, round(th * zoom))
            x, y = rng.randint(0, sw - cw), rng.randint(0, sh - ch)
            candidates.append((x, y, x + cw, y + ch))
        x, y, x1, y1 = max(candidates, key=lambda box: detail(sources[src][1], box))
        cw, ch = x1 - x, y1 - y
    else:
        zoom = rng.uniform(1.0, largest)  # crop size ÷ target size
        cw, ch = min(sw, round(tw * zoom)), min(sh, round(th * zoom))
        x, y = rng.randint(0, sw - cw), rng.randint(0, sh - ch)
    (encoding,) = pick(ENCODINGS_HARD if shape == 'hard' else ENCODINGS, rng.random())
    quality = rng.randint(*HARD_QUALITY) if shape == 'hard' else rng.randint(75, 95)
    orientation = rng.choice([6, 8, 3]) if encoding == 'exif-orientation' else None
    return dict(src=src, box=(x, y, x + cw, y + ch), size=(tw, th), bucket=bucket, aspect=f'{aw}:{ah}',
                encoding=encoding, quality=quality, orientation=orientation)


def render(seed, index, out, shape='photos'):
    p = plan(seed, index, shape)
    name, photo = sources[p['src']]
    im = photo.resize(p['size'], Image.Resampling.LANCZOS, box=p['box'])
    kw = dict(quality=p['quality'], optimize=False)
    enc = p['encoding']
    if enc == 'rgb444':
        kw['subsampling'] = 0
    elif enc == 'progressive':
        kw.update(subsampling=2, progressive=True)
    elif enc == 'gray':
        im = im.convert('L')
    elif enc == 'cmyk':
        im = im.convert('CMYK')
    else:
        kw['subsampling'] = 2
    if p['orientation'] is not None:
        im = im.transpose(STORE_FOR_ORIENTATION[p['orientation']])
        exif = Image.Exif()
        exif[0x0112] = p['orientation']
        kw['exif'] = exif
    path = out / name / f'{index:06d}.jpg'
    im.save(path, 'JPEG', **kw)
    return dict(index=index, cls=name, bucket=p['bucket'], aspect=p['aspect'], encoding=enc,
                width=p['size'][0], height=p['size'][1], bytes=path.stat().st_size)


def list_sources(root):
    """The source photographs: sorted paths and their SHA-256 (cheap: nothing is decoded)."""
    paths = sorted(p for p in Path(root).rglob('*.jpg') if p.is_file())
    if not paths:
        raise SystemExit(f'make-photo-corpus: no *.jpg under {root} (run bash scripts/setup-bench.sh first)')
    stems = [p.stem for p in paths]
    if len(set(stems)) != len(stems):
        raise SystemExit(f'make-photo-corpus: two source photographs share a name: {sorted(stems)}')
    return [dict(name=p.stem, path=str(p.relative_to(root)), sha256=hashlib.sha256(p.read_bytes()).hexdigest()) for p in paths]


def load_sources(root, info):
    """Decodes every source photograph once (upright, RGB) and notes its size in `info`."""
    out = []
    for s in info:
        with Image.open(Path(root) / s['path']) as f:
            im = ImageOps.exif_transpose(f).convert('RGB')
        s.update(width=im.width, height=im.height)
        out.append((s['name'], im))
    return out


def render_task(args):
    return render(*args)


def histogram(values):
    hist = {}
    for lo, hi in zip(HIST_EDGES, HIST_EDGES[1:]):
        n = sum(lo <= v < hi for v in values)
        if n:
            hist[f'{lo}-{hi - 1}'] = n
    return hist


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--sources', required=True, help='folder holding the source photographs (*.jpg, searched recursively)')
    ap.add_argument('--out', required=True, help='output folder (ImageFolder layout)')
    ap.add_argument('--count', type=int, default=2000)
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--jobs', type=int, default=1, help='processes (the output does not depend on it)')
    ap.add_argument('--shape', choices=list(RECIPES), default='photos',
                    help="the project's photo mix, ImageNet's sizes, or hard: high-detail crops at quality 90-95, more 4:4:4")
    a = ap.parse_args()
    out = Path(a.out)
    source_info = list_sources(a.sources)
    params = dict(recipe=RECIPES[a.shape], count=a.count, seed=a.seed, source_sha256=[s['sha256'] for s in source_info], pil=PIL_VERSION)
    key = json.dumps(params, sort_keys=True)
    marker = out / '.complete'
    if marker.exists() and marker.read_text() == key:
        print(f'[corpus] present: {out} ({a.count} images, seed {a.seed})', flush=True)
        return
    if out.exists() and any(out.iterdir()):
        if not (out / 'corpus.json').exists() and not (out / '.partial').exists():
            raise SystemExit(f'make-photo-corpus: {out} is not empty and is not a corpus made by this script; choose another --out')
        print(f'[corpus] {out} was made with other parameters: remaking it', flush=True)
        shutil.rmtree(out)
    global sources
    sources = load_sources(a.sources, source_info)
    out.mkdir(parents=True, exist_ok=True)
    (out / '.partial').write_text(key)
    for name, _ in sources:
        (out / name).mkdir(exist_ok=True)
    print(f'[corpus] {a.count} images from {len(sources)} photographs under {a.sources} -> {out} (seed {a.seed}, {a.jobs} job(s))', flush=True)
    t0 = time.perf_counter()
    tasks = [(a.seed, i, out, a.shape) for i in range(a.count)]
    step = max(1, a.count // 20)
    rows = []

    def progress(row):
        rows.append(row)
        if len(rows) % step == 0 or len(rows) == a.count:
            print(f'[corpus] {len(rows)}/{a.count} ({time.perf_counter() - t0:.1f} s)', flush=True)

    if a.jobs > 1:
        import multiprocessing
        # Forked workers inherit the decoded source photographs.
        with multiprocessing.get_context('fork').Pool(a.jobs) as pool:
            for row in pool.imap_unordered(render_task, tasks, chunksize=8):
                progress(row)
    else:
        for t in tasks:
            progress(render(*t))
    seconds = time.perf_counter() - t0
    rows.sort(key=lambda r: r['index'])
    longs = [max(r['width'], r['height']) for r in rows]
    manifest = dict(
        **params,
        sources=source_info,
        generated_seconds=round(seconds, 1),
        jobs=a.jobs,
        total_bytes=sum(r['bytes'] for r in rows),
        encodings=dict(Counter(r['encoding'] for r in rows).most_common()),
        size_buckets=dict(Counter(r['bucket'] for r in rows).most_common()),
        aspects=dict(Counter(r['aspect'] for r in rows).most_common()),
        long_side_histogram=histogram(longs),
        pixels_mean=round(sum(r['width'] * r['height'] for r in rows) / len(rows)),
        classes=dict(sorted(Counter(r['cls'] for r in rows).items())),
    )
    (out / 'corpus.json').write_text(json.dumps(manifest, indent=1) + '\n')
    (out / '.partial').unlink()
    marker.write_text(key)
    print(f"[corpus] wrote {a.count} JPEGs ({manifest['total_bytes'] / 2**20:.1f} MiB) in {seconds:.1f} s; "
          f"encodings {manifest['encodings']}; long side {manifest['long_side_histogram']}", flush=True)


if __name__ == '__main__':
    sys.exit(main())
