#!/usr/bin/python3
"""Writes a timm-layout ViT reference for the weight-loading tests, with PyTorch.

timm itself cannot be installed here (no Python package index), so the model below is built from
PyTorch's own layers under the names and layouts of timm's VisionTransformer state dict:
patch_embed.proj (a Conv2d), cls_token, pos_embed, blocks.N.{norm1, attn.qkv, attn.proj, norm2,
mlp.fc1, mlp.fc2}, norm, head; pre-norm blocks, exact GELU (nn.GELU), LayerNorm eps 1e-6, the
class token's row into the head. That is timm's forward for vit_tiny_patch16_224 with its
defaults (no layer scale, no qk-norm, no register tokens, token pooling).

Out (in the given directory):
  timm-vit-tiny.safetensors  seeded random weights of vit_tiny_patch16_224's shape, F32
  timm-vit-tiny.input.f32    two images [2, 3, 224, 224], little-endian f32
  timm-vit-tiny.logits.f64   the model's logits [2, 1000], computed in float64
"""
import json
import os
import struct
import sys

import torch
from torch import nn

WIDTH, DEPTH, HEADS, PATCH, SIZE, CLASSES = 192, 12, 3, 16, 224, 1000


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(WIDTH, 3 * WIDTH)
        self.proj = nn.Linear(WIDTH, WIDTH)

    def forward(self, x):
        b, n, c = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, HEADS, c // HEADS).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = (q @ k.transpose(-2, -1)) * (c // HEADS) ** -0.5
        x = attn.softmax(dim=-1) @ v
        return self.proj(x.transpose(1, 2).reshape(b, n, c))


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(WIDTH, 4 * WIDTH)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(4 * WIDTH, WIDTH)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1 = nn.LayerNorm(WIDTH, eps=1e-6)
        self.attn = Attention()
        self.norm2 = nn.LayerNorm(WIDTH, eps=1e-6)
        self.mlp = Mlp()

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class PatchEmbed(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Conv2d(3, WIDTH, kernel_size=PATCH, stride=PATCH)

    def forward(self, x):
        return self.proj(x).flatten(2).transpose(1, 2)


class VisionTransformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.patch_embed = PatchEmbed()
        self.cls_token = nn.Parameter(torch.zeros(1, 1, WIDTH))
        self.pos_embed = nn.Parameter(torch.zeros(1, (SIZE // PATCH) ** 2 + 1, WIDTH))
        self.blocks = nn.Sequential(*[Block() for _ in range(DEPTH)])
        self.norm = nn.LayerNorm(WIDTH, eps=1e-6)
        self.head = nn.Linear(WIDTH, CLASSES)

    def forward(self, x):
        x = self.patch_embed(x)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1) + self.pos_embed
        x = self.norm(self.blocks(x))
        return self.head(x[:, 0])


def write_safetensors(path, state):
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name, tensor in state.items():
        data = tensor.detach().to(torch.float32).contiguous().numpy().astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(tensor.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path + ".tmp", "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for blob in blobs:
            f.write(blob)
    os.replace(path + ".tmp", path)


def main(out):
    torch.manual_seed(0)
    model = VisionTransformer()
    # Larger than timm's initialisation (std 0.02) so every layer moves the logits measurably.
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm1.weight") or name.endswith("norm2.weight") or name == "norm.weight":
                p.copy_(1 + 0.1 * torch.randn_like(p))
            elif name in ("cls_token", "pos_embed") or p.dim() == 1:
                p.copy_(0.1 * torch.randn_like(p))
            else:
                p.copy_(torch.randn_like(p) / p[0].numel() ** 0.5)
    images = torch.randn(2, 3, SIZE, SIZE)
    with torch.no_grad():
        logits = model.double()(images.double())
    write_safetensors(os.path.join(out, "timm-vit-tiny.safetensors"), model.float().state_dict())
    images.numpy().astype("<f4").tofile(os.path.join(out, "timm-vit-tiny.input.f32"))
    logits.numpy().astype("<f8").tofile(os.path.join(out, "timm-vit-tiny.logits.f64"))


if __name__ == "__main__":
    main(sys.argv[1])
