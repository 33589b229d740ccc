"""A byte-level BPE tokenizer in pure Python, for bench/text.ts's PyTorch peer.

There is no Hugging Face `tokenizers` package for Debian's Python here, so this reads the same
tokenizer.json the Tandem side runs (bench/text/corpus.ts trains it with test/shared/bpe-trainer.ts)
and gives the same ids as @huggingface/tokenizers (bench/text.ts checks that on a sample before it
times anything): NFC, GPT-2's byte-level split, the byte -> symbol table, then merges by rank
(lowest first, leftmost first among equals). Words are cached, as tokenizers.js caches them.
It is pure Python: the peer measures a pure-Python tokenizer, not Hugging Face's Rust one.
"""

import json
import unicodedata

# JavaScript's \s (what the /u regex of tokenizers.js matches), not Python's str.isspace().
JS_SPACE = frozenset('\t\n\v\f\r \u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff' + ''.join(chr(c) for c in range(0x2000, 0x200B)))
CONTRACTIONS = ("'s", "'t", "'re", "'ve", "'m", "'ll", "'d")
CACHE_LIMIT = 100_000
CACHE_MAX_WORD = 256


def byte_symbols():
    """GPT-2's table: every byte gets one printable code point."""
    printable = list(range(0x21, 0x7F)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    symbols, shifted = [], 0
    for b in range(256):
        if b in printable:
            symbols.append(chr(b))
        else:
            symbols.append(chr(256 + shifted))
            shifted += 1
    return symbols


def char_class(c):
    """'L' letter, 'N' number, 'S' JavaScript whitespace, 'O' anything else."""
    if c in JS_SPACE:
        return 'S'
    cat = unicodedata.category(c)[0]
    return cat if cat in ('L', 'N') else 'O'


def split_gpt2(text):
    """The pieces of 's|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+ (JS semantics)."""
    classes = [char_class(c) for c in text]
    n, i, out = len(text), 0, []
    while i < n:
        if text[i] == "'":
            hit = next((c for c in CONTRACTIONS if text.startswith(c, i)), None)
            if hit:
                out.append(hit)
                i += len(hit)
                continue
        start = i + 1 if text[i] == ' ' and i + 1 < n else i
        cls = classes[start]
        if cls != 'S' and (start == i or cls in ('L', 'N', 'O')):
            j = start + 1
            while j < n and classes[j] == cls:
                j += 1
            out.append(text[i:j])
            i = j
            continue
        # Whitespace: the run, less its last character when a non-space follows (unless that leaves nothing).
        j = i + 1
        while j < n and classes[j] == 'S':
            j += 1
        if j < n and j - i > 1:
            j -= 1
        out.append(text[i:j])
        i = j
    return out


class ByteLevelBpe:
    def __init__(self, tokenizer_json_path):
        with open(tokenizer_json_path, encoding='utf-8') as f:
            spec = json.load(f)
        model = spec['model']
        if model.get('type') != 'BPE':
            raise ValueError(f"{tokenizer_json_path}: model {model.get('type')}, not BPE")
        self.vocab = model['vocab']
        merges = [tuple(m) if isinstance(m, list) else tuple(m.split(' ', 1)) for m in model['merges']]
        self.ranks = {pair: rank for rank, pair in enumerate(merges)}
        normalizer = (spec.get('normalizer') or {}).get('type')
        self.nfc = normalizer == 'NFC'
        self.symbols = byte_symbols()
        self.cache = {}

    def _bpe(self, word):
        parts = list(word)
        ranks = self.ranks
        while len(parts) > 1:
            best, best_rank = -1, None
            for k in range(len(parts) - 1):
                r = ranks.get((parts[k], parts[k + 1]))
                if r is not None and (best_rank is None or r < best_rank):
                    best, best_rank = k, r
            if best < 0:
                break
            left, right = parts[best], parts[best + 1]
            merged, k = [], 0
            while k < len(parts):
                if k + 1 < len(parts) and parts[k] == left and parts[k + 1] == right:
                    merged.append(left + right)
                    k += 2
                else:
                    merged.append(parts[k])
                    k += 1
            parts = merged
        return [self.vocab[p] for p in parts if p in self.vocab]

    def encode(self, text):
        """The ids of `text`, no special tokens added."""
        if self.nfc:
            text = unicodedata.normalize('NFC', text)
        ids, symbols, cache = [], self.symbols, self.cache
        for piece in split_gpt2(text):
            word = ''.join(symbols[b] for b in piece.encode('utf-8'))
            got = cache.get(word)
            if got is None:
                got = self._bpe(word)
                if len(word) < CACHE_MAX_WORD and len(cache) < CACHE_LIMIT:
                    cache[word] = got
            ids.extend(got)
        return ids
