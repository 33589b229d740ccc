"""The PyTorch user's peer: torchvision.io.VideoReader (its ffmpeg-based 'video_reader' backend,
Debian's python3-torchvision) decoding each video's clip, cover to SIZE x SIZE with antialiased
bilinear resize and centre crop, normalised float32 NCHW-per-frame, in one process.

    /usr/bin/python3 bench/video/torchvision_clips.py PLAN.json
PLAN.json: {"frames": 8, "stride": 2, "size": 112, "mean": [...], "std": [...],
            "threads": 1, "clips": [{"path": ..., "start": seconds}, ...]}
Prints one JSON line: {"seconds", "cpu", "clips", "failures", "firstError"}; a warm-up pass over
the first clips is not timed (imports, the backend's first open).
"""
import json
import sys
import time

import torch
import torchvision
import torchvision.io
import torchvision.transforms.functional as F

torchvision.set_video_backend("video_reader")
plan = json.load(open(sys.argv[1]))
torch.set_num_threads(plan["threads"])
frames, stride, size = plan["frames"], plan["stride"], plan["size"]
mean = torch.tensor(plan["mean"]).view(1, 3, 1, 1)
std = torch.tensor(plan["std"]).view(1, 3, 1, 1)


def clip(path, start):
    reader = torchvision.io.VideoReader(path, "video")
    if start > 0.001:
        reader.seek(start - 0.001)
    got = []
    for i, frame in enumerate(reader):
        if i % stride == 0:
            got.append(frame["data"])
            if len(got) == frames:
                break
    if len(got) != frames:
        raise ValueError(f"{len(got)} of {frames} frames")
    x = torch.stack(got).float().div_(255)
    x = F.resize(x, size, antialias=True)
    x = F.center_crop(x, [size, size])
    return (x - mean) / std


def run(clips):
    failures, first = 0, None
    for c in clips:
        try:
            out = clip(c["path"], c["start"])
            assert tuple(out.shape) == (frames, 3, size, size), out.shape
        except Exception as e:  # one clip's failure is counted, the pass goes on
            failures += 1
            first = first or f"{c['path']}: {e}"
    return failures, first


run(plan["clips"][:2])
t0, c0 = time.perf_counter(), time.process_time()
failures, first = run(plan["clips"])
seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
print(json.dumps({"seconds": seconds, "cpu": cpu, "clips": len(plan["clips"]) - failures, "failures": failures, "firstError": first}))
