"""One clip the way a PyTorch user decodes it with torchvision.io.VideoReader (its ffmpeg-based
'video_reader' backend, Debian's python3-torchvision): seek to the clip's start, every `stride`-th
frame, the shorter side to `size` with antialiased bilinear resize, centre crop, normalised float32
[frames, 3, size, size]. Shared by torchvision_clips.py (one process) and dataloader_clips.py
(DataLoader workers), so both peers decode alike.
"""
import torch
import torchvision
import torchvision.io
import torchvision.transforms.functional as F

torchvision.set_video_backend("video_reader")


def clip_decoder(plan):
    """The clip function for a plan's frames, stride, size, mean and std."""
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

    return clip
