"""Word-level tokenisation against a fixed vocabulary (the blog splits "Hello World" into two words)."""
import re

UNK, SOS, EOS = "<unk>", "SOS", "EOS"
PAD = "<pad>"  # fills a batch's shorter sentences to the longest one's length (Model.run_batch)
# A CJK character is a token of its own; other words are runs of letters/digits; punctuation stands alone.
_TOKEN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]|[^\W\u3400-\u9fff\uf900-\ufaff]+|[^\w\s]", re.UNICODE)


def split(text: str) -> list[str]:
    return _TOKEN.findall(text)


class Vocabulary:
    """Tokens in id order; look-up ignores case, so "Hello" finds "hello", unless `case_sensitive` (a subword
    vocabulary such as Marian's has "▁The" and "▁the"). `end` is its end-of-sentence token: EOS, or Marian's
    </s>."""

    def __init__(self, tokens, *, end: str = EOS, case_sensitive: bool = False):
        self.tokens, self.end, self.case_sensitive = tuple(tokens), end, case_sensitive
        if len(set(map(self._key, self.tokens))) != len(self.tokens):
            raise ValueError("vocabulary tokens must be unique" + ("" if case_sensitive else ", ignoring case"))
        self._ids = {self._key(t): i for i, t in enumerate(self.tokens)}
        for special in (UNK, end):
            if self._key(special) not in self._ids:
                raise ValueError(f"the vocabulary needs the special token {special}")
        if self._key(SOS) not in self._ids and PAD not in self._ids:  # a decoder needs a token to start from
            raise ValueError(f"the vocabulary needs the special token {SOS}")

    def _key(self, token: str) -> str:
        return token if self.case_sensitive else token.lower()

    def never(self, kind: str) -> tuple[int, ...]:
        """The ids no decoder output may be (Config.never_next): "unk", <unk>, which stands for words the vocabulary
        lacks, not for a word to write; "pad", <pad>, as Marian's generation forbids it (bad_words_ids)."""
        return (self.pad_id,) if kind == "pad" else (self._ids[self._key(UNK)],)

    def start_id(self, kind: str) -> int:
        """The id the decoder reads first (Config.decoder_start): SOS, or <pad> as Marian's decoder does."""
        if kind == "pad":
            return self.pad_id
        if self._key(SOS) not in self._ids:
            raise ValueError(f"this vocabulary has no {SOS}: its decoder starts from {PAD} (decoder_start='pad')")
        return self._ids[self._key(SOS)]

    @property
    def pad_id(self) -> int:
        """The id a padded position reads: <pad>'s if the vocabulary has it, else <unk>'s. Either way no real
        position sees it (the padding mask hides padded keys, the loss skips padded targets) and no output is it."""
        return self._ids.get(PAD, self._ids[self._key(UNK)])

    def __len__(self):
        return len(self.tokens)

    def new_words(self, *texts: str) -> tuple[str, ...]:
        """The words of the texts that are not in the vocabulary, lower-cased, in order of first appearance."""
        words = (self._key(w) for text in texts for w in split(text))
        return tuple(dict.fromkeys(w for w in words if w not in self._ids))

    def respelled(self, *texts: str) -> tuple[tuple[str, str], ...]:
        """(word as written, token as the vocabulary spells it) for each word of the texts that the look-up, which
        ignores case, finds under another spelling: ("The", "the"); in order of first appearance."""
        found = ((w, self.tokens[self._ids[self._key(w)]]) for text in texts for w in split(text)
                 if self._key(w) in self._ids)
        return tuple(dict.fromkeys((w, token) for w, token in found if w != token))

    def with_tokens(self, tokens) -> "Vocabulary":
        """This vocabulary with more tokens after its own (their ids follow the last one)."""
        return Vocabulary(self.tokens + tuple(tokens), end=self.end, case_sensitive=self.case_sensitive)

    def id(self, token: str) -> int:
        return self._ids.get(self._key(token), self._ids[self._key(UNK)])

    def encode(self, text: str, side: str = "src"):
        """(ids, tokens as the vocabulary spells them, words that were not in the vocabulary) of a sentence of the
        side "src" or "tgt"; both sides split alike here (a SentencePiece vocabulary has one model per side)."""
        words = split(text)
        ids = [self.id(w) for w in words]
        unknown = [w for w in words if self._key(w) not in self._ids]
        return ids, [self.tokens[i] for i in ids], unknown
