"""A Marian checkpoint's vocabulary and tokenization, as transformers' MarianTokenizer (5.24) does them.

A sentence is cut into SentencePiece pieces ("▁Hello", "▁world", ",") by the source side's model (source.spm) or the
target side's (target.spm); each piece is looked up in vocab.json, the one vocabulary both sides share, and a piece it
lacks is <unk> (the SentencePiece models' own ids are not the vocabulary's). The special tokens typed in a text
(</s>, <unk>, <pad>) are tokens of their own, and a language token at the start of the text (">>cmn_Hans<<") is kept
whole, before the pieces: a multilingual model reads it to choose the language it writes. The source ends with </s>;
the decoder starts from <pad> (engine.Config.decoder_start) and reads the target's pieces after it. MarianTokenizer
also has a Moses punctuation normalizer, which 5.24 sets up but never calls: nothing is normalized here either."""
from __future__ import annotations

import re

from engine.tokens import PAD, UNK, Vocabulary

EOS = "</s>"  # Marian's end of sentence
SPECIALS = (EOS, UNK, PAD)  # MarianTokenizer's special tokens: whole tokens when typed, dropped from a decoded text
_SPECIAL = re.compile("|".join(re.escape(token) for token in SPECIALS))
PIECE_SPACE = "▁"  # SentencePiece's mark of a space before a piece


class MarianVocabulary(Vocabulary):
    """vocab.json's tokens in id order (case matters: "▁The" and "▁the" are two), with the SentencePiece models that
    cut each side's text into pieces; `encode` gives the engine the pieces' ids, `decode` writes ids back as text."""

    def __init__(self, tokens, source, target):
        super().__init__(tokens, end=EOS, case_sensitive=True)
        self.spm = {"src": source, "tgt": target}  # sentencepiece.SentencePieceProcessor of each side

    @property
    def languages(self) -> tuple[str, ...]:
        """The language tokens of a multilingual model's vocabulary, e.g. (">>cmn_Hans<<", ">>yue_Hant<<")."""
        return tuple(t for t in self.tokens if t.startswith(">>") and t.endswith("<<"))

    def pieces(self, text: str, side: str = "src") -> list[str]:
        """The text's tokens before look-up: special tokens whole, each stretch between them its language token
        (if it starts with one) and then its SentencePiece pieces."""
        pieces, start = [], 0
        for special in [*_SPECIAL.finditer(text), None]:
            stretch = text[start:special.start() if special else len(text)]
            if stretch:
                language, stretch = _language_code(stretch)
                pieces += language + self.spm[side].encode(stretch, out_type=str)
            if special:
                pieces.append(special.group())
                start = special.end()
        return pieces

    def encode(self, text: str, side: str = "src"):
        """(ids, tokens, pieces read as <unk>) of a source sentence, which ends with </s>, or of a target prefix."""
        pieces = self.pieces(text, side) + ([EOS] if side == "src" else [])
        ids = [self.id(piece) for piece in pieces]
        unknown = [piece for piece, i in zip(pieces, ids) if self.tokens[i] != piece]
        return ids, [self.tokens[i] for i in ids], unknown

    def decode(self, ids) -> str:
        """The text of token ids, as MarianTokenizer.decode(ids, skip_special_tokens=True): the special tokens left
        out, the other pieces joined by the source side's SentencePiece model (5.24 decodes with the source side's
        model when the vocabulary is shared) and each ▁ a space."""
        pieces = [self.tokens[i] for i in ids if self.tokens[i] not in SPECIALS]
        return self.spm["src"].decode_pieces(pieces).replace(PIECE_SPACE, " ").strip()

    def new_words(self, *texts: str) -> tuple[str, ...]:
        """None: SentencePiece cuts any text into pieces; a piece the vocabulary lacks is read as <unk>."""
        return ()

    def respelled(self, *texts: str) -> tuple[tuple[str, str], ...]:
        return ()


def _language_code(text: str) -> tuple[list[str], str]:
    """([the language token], the rest) of a text that starts with one, as MarianTokenizer.remove_language_code: from
    ">>" to the first "<<"; else ([], the text)."""
    end = text.find("<<")
    if text.startswith(">>") and end != -1:
        return [text[:end + 2]], text[end + 2:]
    return [], text


def with_language(text: str, language: str | None) -> str:
    """The source text with a multilingual model's language token before it (none: the text itself)."""
    return f"{language} {text}" if language else text
