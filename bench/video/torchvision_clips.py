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

from torchvision_clip import clip_decoder

plan = json.load(open(sys.argv[1]))
torch.set_num_threads(plan["threads"])
frames, stride, size = plan["frames"], plan["stride"], plan["size"]
clip = clip_decoder(plan)


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
