"""Word-level tokenisation against a fixed vocabulary (the blog splits "Hello World" into two words)."""
import re

UNK, SOS, EOS = "<unk>", "SOS", "EOS"
PAD = "<pad>"  # fills a batch's shorter sentences to the longest one's length (Model.run_batch)
# A CJK character is a token of its own; other words are runs of letters/digits; punctuation stands alone.
_TOKEN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]|[^\W\u3400-\u9fff\uf900-\ufaff]+|[^\w\s]", re.UNICODE)


def split(text: str) -> list[str]:
    return _TOKEN.findall(text)


class Vocabulary:
    """Tokens in id order; look-up ignores case, so "Hello" finds "hello"."""

    def __init__(self, tokens):
        self.tokens = tuple(tokens)
        if len(set(t.lower() for t in self.tokens)) != len(self.tokens):
            raise ValueError("vocabulary tokens must be unique, ignoring case")
        self._ids = {t.lower(): i for i, t in enumerate(self.tokens)}
        for special in (UNK, SOS, EOS):
            if special.lower() not in self._ids:
                raise ValueError(f"the vocabulary needs the special token {special}")

    @property
    def never_next(self) -> tuple[int, ...]:
        """The ids no decoder output may be: <unk> stands for words the vocabulary lacks, not for a word to write."""
        return (self._ids[UNK.lower()],)

    @property
    def pad_id(self) -> int:
        """The id a padded position reads: <pad>'s if the vocabulary has it, else <unk>'s. Either way no real
        position sees it (the padding mask hides padded keys, the loss skips padded targets) and no output is it."""
        return self._ids.get(PAD, self._ids[UNK.lower()])

    def __len__(self):
        return len(self.tokens)

    def new_words(self, *texts: str) -> tuple[str, ...]:
        """The words of the texts that are not in the vocabulary, lower-cased, in order of first appearance."""
        words = (w.lower() for text in texts for w in split(text))
        return tuple(dict.fromkeys(w for w in words if w not in self._ids))

    def respelled(self, *texts: str) -> tuple[tuple[str, str], ...]:
        """(word as written, token as the vocabulary spells it) for each word of the texts that the look-up, which
        ignores case, finds under another spelling: ("The", "the"); in order of first appearance."""
        found = ((w, self.tokens[self._ids[w.lower()]]) for text in texts for w in split(text) if w.lower() in self._ids)
        return tuple(dict.fromkeys((w, token) for w, token in found if w != token))

    def with_tokens(self, tokens) -> "Vocabulary":
        """This vocabulary with more tokens after its own (their ids follow the last one)."""
        return Vocabulary(self.tokens + tuple(tokens))

    def id(self, token: str) -> int:
        return self._ids.get(token.lower(), self._ids[UNK.lower()])

    def encode(self, text: str):
        """(ids, tokens as the vocabulary spells them, words that were not in the vocabulary)."""
        words = split(text)
        ids = [self.id(w) for w in words]
        unknown = [w for w in words if w.lower() not in self._ids]
        return ids, [self.tokens[i] for i in ids], unknown
