"""The PyTorch user's peer with workers: a torch DataLoader with `workers` worker processes, each
clip decoded in a worker by torchvision.io.VideoReader (its ffmpeg-based 'video_reader' backend,
Debian's python3-torchvision): seek, every `stride`-th frame, antialiased resize of the shorter side
to SIZE and centre crop, normalised float32, batches of `batch` clips.

    /usr/bin/python3 bench/video/dataloader_clips.py PLAN.json
PLAN.json: {"frames", "stride", "size", "mean", "std", "workers", "batch", "clips": [{"path", "start"}]}

An untimed epoch first (the workers start, import and open their first files; they persist), then
the timed epoch. Prints one JSON line: seconds; cpu (utime + stime of the parent and every worker
over the timed epoch, from /proc); readBytes (bytes the processes read through read(2) and the
like, /proc/<pid>/io rchar, over the timed epoch); peakRssMb (the sum of each process's VmHWM);
clips; failures; firstError.
"""
import json
import os
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset

from torchvision_clip import clip_decoder

plan = json.load(open(sys.argv[1]))
frames, stride, size = plan["frames"], plan["stride"], plan["size"]
TICKS = os.sysconf("SC_CLK_TCK")
clip = clip_decoder(plan)


class Clips(Dataset):
    def __init__(self, clips):
        self.clips = clips

    def __len__(self):
        return len(self.clips)

    def __getitem__(self, i):
        c = self.clips[i]
        try:
            return clip(c["path"], c["start"])
        except Exception as e:  # a clip's failure is counted; the epoch goes on
            return f"{c['path']}: {e}"


def collate(items):
    good = [x for x in items if torch.is_tensor(x)]
    return (torch.stack(good) if good else None, [x for x in items if not torch.is_tensor(x)])


def proc_cpu(pid):
    stat = open(f"/proc/{pid}/stat").read()
    f = stat[stat.rindex(")") + 2 :].split()
    return (int(f[11]) + int(f[12])) / TICKS


def proc_field(pid, path, name):
    for line in open(f"/proc/{pid}/{path}"):
        if line.startswith(name):
            return int(line.split()[1])
    return 0


loader = DataLoader(
    Clips(plan["clips"]),
    batch_size=plan["batch"],
    num_workers=plan["workers"],
    persistent_workers=True,
    collate_fn=collate,
)
for _ in loader:  # untimed: the workers start and stay
    pass
# The persistent workers of the loader's iterator (a private attribute: a benchmark's need only).
pids = [os.getpid()] + [w.pid for w in loader._iterator._workers]
cpu0 = sum(proc_cpu(p) for p in pids)
io0 = sum(proc_field(p, "io", "rchar:") for p in pids)
t0 = time.perf_counter()
clips, failures, first = 0, 0, None
for batch, errors in loader:
    if batch is not None:
        assert tuple(batch.shape[1:]) == (frames, 3, size, size), batch.shape
        clips += batch.shape[0]
    failures += len(errors)
    first = first or (errors[0] if errors else None)
seconds = time.perf_counter() - t0
cpu = sum(proc_cpu(p) for p in pids) - cpu0
read = sum(proc_field(p, "io", "rchar:") for p in pids) - io0
peak = sum(proc_field(p, "status", "VmHWM:") for p in pids) / 1024
print(json.dumps({"seconds": seconds, "cpu": cpu, "readBytes": read, "peakRssMb": peak, "clips": clips, "failures": failures, "firstError": first}))
