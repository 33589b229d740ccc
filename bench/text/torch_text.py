"""bench/text.ts's Python peer: PyTorch's DataLoader tokenising in worker processes, concat windows.

The same job as the Tandem side: documents in memory -> byte-level BPE ids + EOS -> one stream cut
into windows of seq + 1 tokens (stride seq, the last one shorter) -> batches of `batch` rows
(inputs, labels; CPU tensors: there is no GPU for torch here). A map-style dataset of chunks of
`chunk` documents: each worker tokenises whole chunks with the pure-Python BPE (python_bpe.py);
the DataLoader hands them back in order and the main process packs. Timed: from building the
tokenizer to the last batch; CPU is this process's and its reaped workers' (os.times).

With --rust the workers tokenise with Hugging Face's `tokenizers` (Rust) instead, where Python has
it (TOKENIZERS_PARALLELISM off: each worker one thread, as each pure-Python worker is).

  python3 torch_text.py --docs FILE --tokenizer FILE --seq 256 --batch 8 --eos ID [--workers 2] [--rust]
  python3 torch_text.py --docs FILE --tokenizer FILE --ids-of N     (the first N documents' ids)
Prints one JSON line.
"""

import argparse
import json
import os
import sys
import time

# One thread per worker process for Hugging Face's tokenizers too (--rust), as each side gets.
os.environ.setdefault('TOKENIZERS_PARALLELISM', 'false')
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from python_bpe import ByteLevelBpe  # noqa: E402


class Fnv:
    """FNV-1a over 32-bit values, as bench/text/child.ts computes it."""

    def __init__(self):
        self.h = 0x811C9DC5

    def add(self, x):
        self.h = ((self.h ^ (x & 0xFFFFFFFF)) * 0x01000193) & 0xFFFFFFFF


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--docs', required=True)
    p.add_argument('--tokenizer', required=True)
    p.add_argument('--seq', type=int, default=256)
    p.add_argument('--batch', type=int, default=8)
    p.add_argument('--eos', type=int, default=0)
    p.add_argument('--workers', type=int, default=2)
    p.add_argument('--chunk', type=int, default=64)
    p.add_argument('--ids-of', type=int, default=0)
    p.add_argument('--check', action='store_true')
    p.add_argument('--rust', action='store_true', help="Hugging Face's tokenizers (Rust) in the workers")
    p.add_argument('--gpu', default='off', help='ignored: torch has no GPU here')
    a = p.parse_args()
    with open(a.docs, encoding='utf-8') as f:
        documents = json.load(f)
    if a.ids_of:
        bpe = ByteLevelBpe(a.tokenizer)
        print(json.dumps([bpe.encode(d) for d in documents[: a.ids_of]]))
        return

    import torch
    from torch.utils.data import DataLoader, Dataset

    torch.set_num_threads(1)

    class Chunks(Dataset):
        def __init__(self, docs, bpe, chunk, eos):
            self.docs, self.bpe, self.chunk, self.eos = docs, bpe, chunk, eos

        def __len__(self):
            return (len(self.docs) + self.chunk - 1) // self.chunk

        def __getitem__(self, i):
            ids = []
            for d in self.docs[i * self.chunk : (i + 1) * self.chunk]:
                ids.extend(self.bpe.encode(d))
                ids.append(self.eos)
            return torch.tensor(ids, dtype=torch.int32)

    class RustBpe:
        """Hugging Face's tokenizers with the interface of python_bpe.ByteLevelBpe."""

        def __init__(self, path):
            from tokenizers import Tokenizer

            self.tokenizer = Tokenizer.from_file(path)

        def encode(self, text):
            return self.tokenizer.encode(text, add_special_tokens=False).ids

    seq, rows_per_batch, row_tokens = a.seq, a.batch, a.seq + 1
    counts, ids = Fnv(), Fnv()
    tokens = batches = 0
    first_batch = None
    c0 = os.times()
    t0 = time.perf_counter()

    def delivered(windows):
        nonlocal tokens, batches, first_batch
        n = sum(min(len(w), seq) for w in windows)
        if first_batch is None:
            first_batch = time.perf_counter() - t0
        batches += 1
        tokens += n
        counts.add(n)
        inputs = torch.full((rows_per_batch, seq), a.eos, dtype=torch.int32)
        labels = torch.full((rows_per_batch, seq), -1, dtype=torch.int32)
        for r, w in enumerate(windows):
            inputs[r, : min(len(w), seq)] = w[:seq]
            labels[r, : len(w) - 1] = w[1:]
            if a.check:
                for x, y in zip(w[:-1].tolist(), w[1:].tolist()):
                    ids.add(x)
                    ids.add(y)
        return inputs, labels

    bpe = RustBpe(a.tokenizer) if a.rust else ByteLevelBpe(a.tokenizer)
    loader = DataLoader(Chunks(documents, bpe, a.chunk, a.eos), batch_size=None, num_workers=a.workers, shuffle=False)
    stream = torch.empty(0, dtype=torch.int32)
    window = rows_per_batch * seq + 1
    for chunk in loader:
        stream = torch.cat([stream, chunk])
        while len(stream) >= window:
            full = stream[:window].unfold(0, row_tokens, seq)
            delivered(list(full))
            stream = stream[rows_per_batch * seq :]
    rows = []
    while len(stream) >= 2:
        n = min(row_tokens, len(stream))
        rows.append(stream[:n])
        stream = stream[n:] if n < row_tokens else stream[seq:]
        if len(rows) == rows_per_batch:
            delivered(rows)
            rows = []
    if rows:
        delivered(rows)
    del loader
    seconds = time.perf_counter() - t0
    c1 = os.times()
    cpu = (c1.user - c0.user) + (c1.system - c0.system) + (c1.children_user - c0.children_user) + (c1.children_system - c0.children_system)
    out = {
        'side': 'torch',
        'runtime': 'python',
        'version': f'Python {sys.version.split()[0]}, torch {torch.__version__}' + (f', tokenizers {tokenizers_version()}' if a.rust else ''),
        'target': 'cpu',
        'seconds': seconds,
        'cpuSeconds': cpu,
        'tokens': tokens,
        'batches': batches,
        'firstBatchSeconds': first_batch,
        'counts': format(counts.h, 'x'),
        'ids': format(ids.h, 'x') if a.check else None,
    }
    print(json.dumps(out))


def tokenizers_version():
    import tokenizers

    return tokenizers.__version__


if __name__ == '__main__':
    main()
