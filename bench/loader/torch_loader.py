#!/usr/bin/python3
"""The PyTorch side of bench/loader.ts, in a process of its own (run with Debian's /usr/bin/python3).

torchvision.datasets.ImageFolder + Compose([Resize(size), CenterCrop(size), PILToTensor()]) (or, with
--transform rrc, [RandomResizedCrop(size), RandomHorizontalFlip(), PILToTensor()]),
DataLoader(batch_size, num_workers, shuffle=False); every batch is iterated and a few of its bytes
touched (as Tandem's child does). Torch's own defaults are left alone (the DataLoader's worker loop
sets 1 intra-op thread per worker itself).

Untimed setup: importing torch/torchvision, building the ImageFolder (it lists the folder) and the
DataLoader. Timed: from asking for the iterator (the workers are forked there) to the last batch;
the iterator then shuts its workers down and joins them, so RUSAGE_CHILDREN holds their CPU time.

Prints one JSON line on stdout.

    /usr/bin/python3 bench/loader/torch_loader.py --corpus DIR [--images N] [--workers 2] [--batch 32] [--size 224] [--transform cover|rrc] [--draft]
"""
import argparse
import json
import multiprocessing
import resource
import sys
import time

import PIL
import PIL.Image
import torch
import torchvision
from torch.utils.data import DataLoader, Subset
from torchvision import datasets, transforms


def cpu(who):
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def peak_rss_kb():
    # VmHWM of this process (ru_maxrss could include the parent's memory from before exec)
    with open('/proc/self/status') as f:
        return int(next(line.split()[1] for line in f if line.startswith('VmHWM')))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--corpus', required=True)
    ap.add_argument('--images', type=int, default=0, help='first N images of the listing (0: all)')
    ap.add_argument('--workers', type=int, default=2)
    ap.add_argument('--batch', type=int, default=32)
    ap.add_argument('--size', type=int, default=224)
    ap.add_argument('--transform', choices=['cover', 'rrc'], default='cover',
                    help="cover: Resize + CenterCrop; rrc: RandomResizedCrop + RandomHorizontalFlip (the training transform)")
    ap.add_argument('--draft', action='store_true',
                    help="open each JPEG with PIL's draft(): libjpeg's DCT-domain downscale to the smallest size still >= the target")
    a = ap.parse_args()

    if a.transform == 'rrc':
        tf = transforms.Compose([transforms.RandomResizedCrop(a.size), transforms.RandomHorizontalFlip(), transforms.PILToTensor()])
    else:
        tf = transforms.Compose([transforms.Resize(a.size), transforms.CenterCrop(a.size), transforms.PILToTensor()])

    def draft_loader(path):
        # The one-line change a careful PyTorch user makes: decode at 1/2, 1/4 or 1/8 scale when
        # the image stays at least the target size (both sides, so Resize's shorter side holds).
        with open(path, 'rb') as f:
            image = PIL.Image.open(f)
            image.draft('RGB', (a.size, a.size))
            return image.convert('RGB')

    dataset = datasets.ImageFolder(a.corpus, transform=tf, **({'loader': draft_loader} if a.draft else {}))
    if a.images > 0:
        dataset = Subset(dataset, range(min(a.images, len(dataset))))
    loader = DataLoader(dataset, batch_size=a.batch, num_workers=a.workers, shuffle=False)

    cpu0 = cpu(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    first = None
    images = batches = checksum = 0
    failures = 0
    error = None
    try:
        for x, _labels in loader:
            if first is None:
                first = time.perf_counter() - t0
            checksum += int(x.reshape(-1)[::4099].sum())
            images += x.shape[0]
            batches += 1
    except Exception as e:  # a bad image ends the DataLoader's epoch: the rest is lost
        error = f'{type(e).__name__}: {e}'
        failures = len(dataset) - images
        print(f'[torch-child] DataLoader stopped: {error}', file=sys.stderr)
    seconds = time.perf_counter() - t0
    alive = len(multiprocessing.active_children())
    cpu_timed = cpu(resource.RUSAGE_SELF) + cpu(resource.RUSAGE_CHILDREN) - cpu0
    print(json.dumps(dict(
        runtime='python', listed=len(dataset), images=images, failures=failures, error=error, batches=batches,
        checksum=checksum, seconds=seconds, firstBatchSeconds=first or 0.0, cpuSeconds=cpu_timed,
        cpuTotalSeconds=cpu(resource.RUSAGE_SELF) + cpu(resource.RUSAGE_CHILDREN), peakRssKb=peak_rss_kb(),
        childrenMaxRssKb=resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, workersAlive=alive,
        torchThreads=torch.get_num_threads(), workers=a.workers, draft=a.draft,
        versions=dict(python=sys.version.split()[0], torch=torch.__version__, torchvision=torchvision.__version__, pil=PIL.__version__),
    )), flush=True)
    return 1 if error else 0


if __name__ == '__main__':
    sys.exit(main())
