"""The trained model's text: the standard library's pydoc topics, as 16 tokens.

``pydoc_data.topics`` ships with every Python, so training needs no download. The 15 most frequent
characters are tokens 0..14, every other one is 15; the last tenth is held out. The text differs a
little between Python releases: ``Corpus.sha256`` names the one used."""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pydoc_data import topics

import numpy as np

HELD_OUT_SHARE = 0.1  # the tail of the text kept for evaluation
OTHER = "<other>"  # the name of the last token


def raw_text() -> str:
    """Every pydoc topic, joined in the order of their names."""
    return "".join(topics.topics[name] for name in sorted(topics.topics))


def normalize(text: str) -> str:
    """Lower case, and each run of whitespace as one space."""
    return re.sub(r"\s+", " ", text.lower())


@dataclass(frozen=True)
class Alphabet:
    """The characters of tokens 0 .. len(chars) - 1; every other character is the last token."""

    chars: str

    @property
    def vocab(self) -> int:
        return len(self.chars) + 1

    @property
    def other(self) -> int:
        return len(self.chars)

    @classmethod
    def most_frequent(cls, text: str, vocab: int) -> Alphabet:
        """The vocab - 1 most frequent characters of ``text`` (ties: the smaller character)."""
        counts = Counter(text)
        ranked = sorted(counts, key=lambda char: (-counts[char], char))
        return cls("".join(ranked[: vocab - 1]))

    def encode(self, text: str) -> np.ndarray:
        """Token ids of ``text``, int64."""
        index = {char: token for token, char in enumerate(self.chars)}
        return np.array([index.get(char, self.other) for char in text], dtype=np.int64)

    def decode(self, tokens: Iterable[int], other: str = "#") -> str:
        """The text of ``tokens``, with ``other`` for the last token's many characters."""
        return "".join(other if token == self.other else self.chars[token] for token in tokens)

    def symbol(self, token: int) -> str:
        """How a token prints: its character (space as "␣"), or OTHER."""
        if token == self.other:
            return OTHER
        return "␣" if self.chars[token] == " " else self.chars[token]


@dataclass(frozen=True)
class Corpus:
    """The tokenized text: a training part and a held-out part, with the alphabet used."""

    alphabet: Alphabet
    train: np.ndarray  # int64 token ids
    held_out: np.ndarray
    sha256: str  # of the normalized text, before the split

    def held_out_sequences(self, length: int, count: int) -> np.ndarray:
        """``count`` disjoint sequences of ``length`` held-out tokens: every report reads these."""
        return spread_sequences(self.held_out, length, count)


def spread_sequences(tokens: np.ndarray, length: int, count: int) -> np.ndarray:
    """``count`` disjoint slices of ``length`` tokens, evenly spaced: (count, length)."""
    stride = len(tokens) // count
    if stride < length:
        raise ValueError(f"{count} disjoint sequences of {length} tokens need "
                         f"{count * length} tokens, the text has {len(tokens)}")
    starts = np.arange(count) * stride
    return tokens[starts[:, None] + np.arange(length)]


def random_chunks(tokens: np.ndarray, length: int, count: int,
                  rng: np.random.Generator) -> np.ndarray:
    """``count`` slices of ``length`` tokens at random places: (count, length)."""
    starts = rng.integers(0, len(tokens) - length + 1, size=count)
    return tokens[starts[:, None] + np.arange(length)]


@cache
def load_corpus(vocab: int = 16) -> Corpus:
    """The pydoc topics as ``vocab`` tokens, split into training and held-out parts."""
    text = normalize(raw_text())
    cut = int(len(text) * (1.0 - HELD_OUT_SHARE))
    alphabet = Alphabet.most_frequent(text[:cut], vocab)
    tokens = alphabet.encode(text)
    digest = hashlib.sha256(text.encode()).hexdigest()
    return Corpus(alphabet, tokens[:cut], tokens[cut:], digest)
