#!/usr/bin/python3
"""Checks the hand-written timm reference (make-timm-reference.py) against timm itself.

make-timm-reference.py imitates timm's VisionTransformer with PyTorch's own layers, because timm
is not in Debian's archive and CI installs only from there and the npm registry. Where timm can
be imported (a local wheel, a venv), this builds the real model,

  timm.create_model('vit_tiny_patch16_224', pretrained=False, num_classes=..., img_size=...)

with the classes and image size read from the fixture, loads the fixture's safetensors into it
(strictly: every one of timm's tensors, no extra ones, the same shapes), runs it in float64 on
the fixture's images, as the reference did, and compares its logits with the fixture's.

  usage: check-timm-reference.py [FIXTURE_DIR] [--layers]
    FIXTURE_DIR  default test/fixtures/generated
    --layers     also compare every module both models share (patch_embed, blocks.N and their
                 norm1, attn, norm2, mlp, norm, head) with the imitation's, on the same weights;
                 done anyway when the logits differ, to say where

Exit 0: equal within the tolerance, or timm not importable (skipped). Exit 1: they differ.
Exit 2: the fixture is missing or not what this expects.

Tolerance: both sides run in float64 on the same weights (float32 values, exact in float64) and
the same images, so only the order of floating-point operations may differ (fused or unfused
attention, matmul blocking). float64's epsilon is 2.2e-16; through 12 blocks of sums over at most
768 terms that stays far below 1e-10 of the logits' size. Any real difference of form is many
orders larger: the tanh GELU moves these logits by 7.0e-4 and LayerNorm eps 1e-5 by 2.7e-4
(docs/frameworks.md), and a float32 run by about 1e-6. So the bar is
max |diff| <= 1e-10 * max(1, max |logit|). Two controls show the bar can fail: timm itself
with the tanh GELU, and with LayerNorm eps 1e-5, on the same weights, must both miss it (else
exit 1: the comparison would prove nothing).
"""
import importlib.util
import json
import math
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RELATIVE_TOLERANCE = 1e-10


def fail(code, message):
    print(f"[timm check] {message}")
    sys.exit(code)


def read_safetensors(path, torch):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    body = memoryview(data)[8 + n :]
    dtypes = {"F32": torch.float32, "F64": torch.float64, "F16": torch.float16, "BF16": torch.bfloat16}
    state = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        raw = bytearray(body[start:end])  # a writable copy: torch.frombuffer warns on read-only ones
        t = torch.frombuffer(raw, dtype=dtypes[info["dtype"]]) if end > start else torch.empty(0)
        state[name] = t.reshape(info["shape"]).clone()
    return state


def load_imitation():
    spec = importlib.util.spec_from_file_location("make_timm_reference", os.path.join(HERE, "make-timm-reference.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def compare_layers(torch, timm_model, imitation, state, images):
    """Each module both models have, by name: the largest |difference| of its output."""
    own = dict(imitation.named_modules())
    shared = [name for name, _ in timm_model.named_modules() if name and name in own]
    outputs = {"timm": {}, "imitation": {}}
    hooks = []
    for side, model in (("timm", timm_model), ("imitation", imitation)):
        modules = dict(model.named_modules())
        for name in shared:
            def hook(_m, _i, out, side=side, name=name):
                outputs[side][name] = out.detach().clone()
            hooks.append(modules[name].register_forward_hook(hook))
    with torch.no_grad():
        timm_model(images)
        imitation(images)
    for h in hooks:
        h.remove()
    first_bad = None
    print("[timm check] per module, largest |timm - imitation| (same weights, float64):")
    for name in shared:
        a, b = outputs["timm"].get(name), outputs["imitation"].get(name)
        if a is None or b is None:
            print(f"  {name:24s} not run by {'timm' if a is None else 'the imitation'}")
            continue
        if a.shape != b.shape:
            print(f"  {name:24s} shapes differ: timm {tuple(a.shape)}, imitation {tuple(b.shape)}")
            first_bad = first_bad or name
            continue
        d = (a - b).abs().max().item()
        scale = max(1.0, a.abs().max().item())
        print(f"  {name:24s} {d:.3e}  (output up to {scale:.3g})")
        if d > RELATIVE_TOLERANCE * scale and first_bad is None:
            first_bad = name
    if first_bad:
        print(f"[timm check] first module that differs: {first_bad}")
    else:
        print("[timm check] every shared module agrees with the imitation: the fixture's logits are not its output (stale?)")


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    layers = "--layers" in argv
    out = args[0] if args else os.path.join(HERE, "..", "test", "fixtures", "generated")
    try:
        import timm
    except ImportError:
        fail(0, "timm not installed: skipped (the hand-written reference stands)")
    import numpy
    import torch

    paths = {k: os.path.join(out, f"timm-vit-tiny.{k}") for k in ("safetensors", "input.f32", "logits.f64")}
    for p in paths.values():
        if not os.path.isfile(p) or os.path.getsize(p) == 0:
            fail(2, f"fixture missing: {p} (bash scripts/make-fixtures.sh makes it)")

    state = read_safetensors(paths["safetensors"], torch)
    try:
        classes, width = state["head.weight"].shape
        tokens = state["pos_embed"].shape[1]
        patch = state["patch_embed.proj.weight"].shape[-1]
    except KeyError as e:
        fail(2, f"the fixture's safetensors has no {e}")
    side = math.isqrt(tokens - 1)
    size = side * patch
    if side * side != tokens - 1:
        fail(2, f"pos_embed has {tokens} tokens: not a class token and a square grid")
    images = torch.from_numpy(numpy.fromfile(paths["input.f32"], dtype="<f4").astype("float64"))
    if images.numel() % (3 * size * size):
        fail(2, f"{paths['input.f32']} holds {images.numel()} values, not whole [3, {size}, {size}] images")
    images = images.reshape(-1, 3, size, size)
    want = torch.from_numpy(numpy.fromfile(paths["logits.f64"], dtype="<f8").copy())
    if want.numel() != images.shape[0] * classes:
        fail(2, f"{paths['logits.f64']} holds {want.numel()} values, not [{images.shape[0]}, {classes}]")
    want = want.reshape(images.shape[0], classes)

    model = timm.create_model("vit_tiny_patch16_224", pretrained=False, num_classes=classes, img_size=size)
    if model.embed_dim != width or model.patch_embed.patch_size[0] != patch:
        fail(2, f"the fixture is not vit_tiny_patch16_224's shape (width {width}, patch {patch})")
    model = model.double().eval()
    result = model.load_state_dict(state, strict=True)  # copies into the float64 parameters
    if getattr(result, "missing_keys", None) or getattr(result, "unexpected_keys", None):
        fail(1, f"state dict mismatch: {result}")
    fused = getattr(model.blocks[0].attn, "fused_attn", None)
    with torch.no_grad():
        got = model(images)
    if got.dtype != torch.float64:
        fail(1, f"timm ran in {got.dtype}, not float64")

    diff = (got - want).abs().max().item()
    scale = want.abs().max().item()
    bound = RELATIVE_TOLERANCE * max(1.0, scale)
    agree = (got.argmax(1) == want.argmax(1)).all().item()
    print(
        f"[timm check] timm {timm.__version__} (torch {torch.__version__}, float64, fused attention {fused}): "
        f"vit_tiny_patch16_224, {classes} classes, {size} px, {len(state)} tensors loaded strictly, "
        f"{images.shape[0]} images"
    )
    ok = diff <= bound
    print(
        f"[timm check] {'EQUAL' if ok else 'DIFFERENT'}: max |timm - fixture logit| = {diff:.3e} "
        f"(relative {diff / scale:.3e}; logits up to {scale:.3f}; bar {bound:.1e}); top-1 {'agrees' if agree else 'differs'}"
    )
    # Controls: timm with one form changed, on the same weights, must miss the bar, or the
    # comparison above could not have told anything.
    from functools import partial

    controls = {
        "tanh GELU": {"act_layer": "gelu_tanh"},
        "LayerNorm eps 1e-5": {"norm_layer": partial(torch.nn.LayerNorm, eps=1e-5)},
    }
    vacuous = []
    for label, kwargs in controls.items():
        wrong = timm.create_model("vit_tiny_patch16_224", pretrained=False, num_classes=classes, img_size=size, **kwargs)
        wrong = wrong.double().eval()
        wrong.load_state_dict(state, strict=True)
        with torch.no_grad():
            d = (wrong(images) - want).abs().max().item()
        print(f"[timm check] control, timm with {label}: max |diff| = {d:.3e} ({'caught' if d > bound else 'NOT caught'})")
        if d <= bound:
            vacuous.append(label)
    if vacuous:
        print(f"[timm check] the comparison cannot tell {', '.join(vacuous)} from the reference: it proves nothing")
        ok = False

    if layers or not ok:
        imitation = load_imitation().VisionTransformer()
        imitation.load_state_dict(state, strict=True)
        compare_layers(torch, model, imitation.double().eval(), state, images)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main(sys.argv[1:])
