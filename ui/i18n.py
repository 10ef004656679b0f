"""Every user-facing string, in English and Simplified Chinese (terms from shared/GLOSSARY.md)."""
import functools
import re

from engine.blog import DIFFERENCES

LANGUAGES = {"en": "English", "zh": "简体中文"}

EN = {
    # app frame
    "section.start": "Start",
    "section.encoder": "Encoder",
    "section.decoder": "Decoder",
    "section.compare": "Compare",
    "lang.label": "Language",
    "ctl.digits": "Digits",
    "ctl.digits_help": "Significant digits of every number shown (matrices, heatmaps, a cell's arithmetic). "
                       "Only the printing changes: the model computes with every digit.",
    "ctl.preset": "Preset",
    "ctl.src": "Source sentence",
    "ctl.tgt": "Target prefix (the decoder reads SOS + this)",
    "ctl.tgt_sos": "The post's decoder step: SOS alone",
    "ctl.tgt_default": "Target “{target}” (three decoder positions)",
    "ctl.options": "Options: digits, model",
    "ctl.sizes": "Sizes",
    "ctl.seed": "Random seed",
    "ctl.divisor": "Attention divisor",
    "ctl.divisor.sqrt": "√d_k (paper)",
    "ctl.divisor.number": "a number",
    "ctl.divisor.value": "Divide the scores by",
    "ctl.layer_norm": "LayerNorm form",
    "ctl.eps": "LayerNorm ε",
    "ctl.norm_placement": "Norm placement",
    "ctl.pos_encoding": "Positional encoding",
    "ctl.activation": "Activation",
    "ctl.softmax": "Softmax form",
    "ctl.embed_scale": "Scale embeddings by √d_model",
    "ctl.attn_bias": "Biases in attention (Q, K, V, O)",
    "ctl.ffn_bias": "Biases in the feed-forward network",
    "ctl.shared_embeddings": "One embedding table for source and target",
    "ctl.tied_output": "Output layer = embedding transposed",
    "ctl.reset_edits": "Reset all edited weights",
    "ctl.drop_weights": "Back to the preset's random weights",
    "model.in_use_line": "**Model in use:** {model}",
    "model.sizes": "d_model = {d_model}, h = {h}, d_k = {d_k}, d_ff = {d_ff}, N = {n_layers}.",
    "model.card": "{sizes} {origin}",
    "model.from.hello-world": "Weights: the post's numbers where it gives them (the embeddings of hello, world and "
                              "SOS, the first encoder layer's $W^Q$, $W^K$, $W^V$, $W^O$ where their shapes fit), "
                              "random from seed {seed} elsewhere.",
    "model.from.paper": "Weights: random from seed {seed} (Xavier-uniform matrices, as PyTorch's nn.Transformer): "
                        "they have learned nothing.",
    "model.from.trained": "Weights: trained on this server on the {corpus} corpus for {steps} steps, from the random "
                          "start of the preset “{preset}” (seed {seed}).",
    "model.from.uploaded": "Weights: loaded from the file {file} (made from the preset “{preset}”, seed {seed}).",
    "model.from.shipped": "Weights: the model shipped with the app, trained on the {corpus} corpus (engine/data), "
                          "from the preset “{preset}” (seed {seed}).",
    "model.from.unknown": "Weights: trained or loaded on this server; where they came from was not recorded (preset "
                          "“{preset}”, seed {seed}).",
    "model.kept": "Their link (weights={id}) works on this server as long as it keeps them: it keeps up to {files} "
                  "weight files ({mb} MB), and deletes the least recently used (opened or saved) first when it needs "
                  "room. There is no time limit.",
    "model.kept_memory": "These weights could not be saved to the server's disk: their link (weights={id}) works only "
                         "in this server process, while they are among the {n} weights it used last, and not after "
                         "it restarts.",
    "model.text_replaced": "Training put a pair it learned, {new_src} → {new_tgt}, in place of your sentences {src} → "
                           "{tgt}.",
    "model.text_restore": "Back to your sentences",
    "ctl.edits": "Some weights are edited: every page uses them.",
    "ctl.layer": "Layer",
    "ctl.layer_help": "Layers are numbered from 1. Step names count from 0, as code does: enc.0 and dec.0 are layer 1.",
    "ctl.share": "Copy link",
    "ctl.share_help": "The link holds every setting and edit, and what this page shows: head, step, layer and cell.",
    "ctl.share_done": "Link copied",
    "ctl.share_failed": "Could not copy: copy the page address instead",
    "choice.paper": "√(σ² + ε) (PyTorch; the paper gives no formula)",
    "choice.blog": "blog",
    "choice.post": "post-norm (paper)",
    "choice.pre": "pre-norm (Annotated Transformer)",
    "choice.sinusoidal": "sinusoid (paper)",
    "choice.blog_table": "the post's printed table",
    "choice.learned": "learned",
    "choice.none": "none",
    "choice.relu": "ReLU",
    "choice.gelu": "GELU",
    "choice.stable": "stable (subtract the row max)",
    "choice.naive": "naive (the post's)",
    "preset.hello-world": "Hello World (the blog's example)",
    "preset.paper": "Paper (base model)",
    # messages
    "msg.kept": "{error} — the previous settings are kept.",
    "msg.url": "Part of the link was ignored: {detail}",
    "msg.new_words": "New words, not in the model's vocabulary of {n} tokens: **{words}**. Rather than one shared "
                     "`<unk>`, each gets an embedding row and an output column of its own, drawn from the seed ({seed}) "
                     "and the word alone, as the post draws its words: the same word always gets the same numbers, "
                     "and a link reproduces them. The model has never learned these words.",
    "msg.nonfinite": "Some numbers are not finite (∞ or NaN), first at step {step}.",
    "msg.edit_bad": "{param}[{index}]: {value!r} is not a finite number between −1,000,000 and 1,000,000; the old value is kept.",
    "msg.edits_dropped": "{n} edit(s) no longer fit the model's sizes and were dropped.",
    "msg.too_big": "{field} is limited to {high} in the app (asked for {value}), so pages stay fast.",
    "msg.too_long": "The {side} has {n} tokens; the app shows at most {high}.",
    "msg.text_cut": "The {side} has {n} characters; only its first {high} are kept.",
    "msg.empty": "The source sentence is empty: type at least one word.",
    "msg.weights_gone": "The trained weights of this link ({id}) are no longer on this server; the preset's "
                        "random weights are used.",
    "msg.upload_unpacks": "it unpacks to {mb} MB; at most {high} MB are loaded",
    "msg.upload_odd_words": "{n} vocabulary entries are not single words, which no sentence can reach",
    "msg.not_divisible": "d_model ({d_model}) is not divisible by n_heads ({n_heads}): choose sizes that divide, "
                         "or set d_k and d_v yourself",
    "side.src": "source sentence",
    "side.tgt": "target prefix",
    # step view
    "view.shape": "Shape",
    "view.drill": "How was this cell computed?",
    "view.drill_hint": "Click a cell of the heatmap, or pick it here. Indices in brackets count from 0, as in code: "
                       "a per-head step's first index 0 is head 1, and row 0 is the first token (pos = 0).",
    "view.row": "Row",
    "view.col": "Column",
    "view.head": "Head",
    "view.step": "Step",
    "view.edit": "Edit {name}",
    "view.edit_hint": "Double-click a cell, type a number, press Enter: every later step is recomputed.",
    "view.edit_hint_cell": "Pick a row and a column, type a number, press Enter: every later step is recomputed.",
    "view.reset": "Reset {name}",
    "view.slide_hint": "Or drag a slider and let go: its range is the value ± 2 × |value| (at least ± 1, at most ± 1,000,000 in all), and it is centred again on the new value.",
    "view.slider": "Slide",
    "view.slider_row": "Sliders for a row",
    "view.slider_pick": "Pick a row: a slider for each of its numbers",
    "view.edit_window": "The boxed number is the chosen cell; shown: rows {rows}, columns {cols} of {n_rows} × {n_cols}.",
    "view.compare": "Compare with the unedited model",
    "view.unchanged": "The edits do not change this step: it is the same as in the unedited model.",
    "view.difference": "Edited minus unedited: {changed} of {total} numbers changed (outlined when few), by up to {largest}.",
    "view.unedited_value": "In the unedited model this cell is {value}; the edits changed it by {change}.",
    "view.big": "This matrix is {rows} × {cols}: shown as a heatmap only.",
    "view.plain": "Plain text",
    "view.input": "Input",
    # pages
    "page.overview": "Overview",
    "page.tokens": "Tokens & embedding",
    "page.positional": "Positional encoding",
    "page.qkv": "Q, K, V per head",
    "page.attention": "Scores, scaling, softmax",
    "page.multihead": "Concat & $W^O$",
    "page.add_norm": "Add & LayerNorm",
    "page.ffn": "Feed-forward",
    "page.encoder_stack": "The encoder stack",
    "page.decoder_input": "Decoder input",
    "page.masked_attention": "Masked self-attention",
    "page.cross_attention": "Cross-attention",
    "page.output": "Output & next token",
    "page.paper_vs_blog": "Paper vs blog",
    "intro.overview": "The original Transformer reads a sentence with its **encoder** and writes the translation with "
                      "its **decoder**, one token at a time. Every page follows the same numbers through one step. "
                      "Change the sentence, the options or any weight on the left or on a page, and every later "
                      "number changes.",
    "intro.tokens": "The sentence is split into tokens (here: words). Each token's id picks one row of the "
                    "embedding table: a vector of d_model numbers that the model learns.",
    "intro.tokens.embed_scale": "As in the paper (section 3.4), the row is multiplied by √d_model before the "
                                "positional encoding is added.",
    "intro.tokens.no_embed_scale": "The row is used as it is, as in the post; the paper multiplies it by √d_model "
                                   "(the option “Scale embeddings by √d_model”).",
    "intro.positional": "Attention itself ignores word order, so a positional encoding, one vector per position, "
                        "is added to the embeddings. Positions count from 0, as in the paper's formula: pos = 0 is "
                        "the first token.",
    "intro.positional.sinusoidal": "Here it is the paper's: sines and cosines of different frequencies, sin in the "
                                   "even columns 2i and cos in the odd columns 2i + 1, which share the exponent "
                                   "2i/d_model.",
    "intro.positional.blog": "Here it is the post's formula: sin in the even columns and cos in the odd ones, but "
                             "each column j with its own exponent 2j/d_model (the paper gives columns 2i and 2i + 1 "
                             "the same exponent 2i/d_model).",
    "intro.positional.blog_table": "Here PE is the table the post prints: two rows of four numbers, for positions 0 "
                                   "and 1, rounded by hand (cos(0.01) = 0.99995 shows as 0.99). A further position "
                                   "or column comes from the post's formula, rounded to 2 decimals; the formula and "
                                   "each cell's arithmetic say which.",
    "intro.positional.learned": "Here it is learned: row pos of a table P that is trained like the embeddings, with "
                                "no formula (BERT does this; the paper found it works about as well as the sinusoid).",
    "intro.positional.none": "Here there is none (PE = 0): the model cannot tell the order of the words.",
    "intro.qkv": "Each head multiplies the input by its own three matrices: queries (what a token looks for), "
                 "keys (what it offers) and values (what it passes on).",
    "intro.qkv.attn_bias": "Each projection also adds a bias (b^Q, b^K, b^V), as PyTorch's nn.MultiheadAttention "
                           "does; the paper's formulas write none.",
    "intro.qkv.no_attn_bias": "The projections have no bias: the matrices alone, as in the paper's formulas and the "
                              "post.",
    "intro.attention": "Scaled dot-product attention: every query is compared with every key (a dot product), "
                       "divided so the numbers stay moderate, and turned into weights that sum to 1 by softmax. Each "
                       "head's output is the weighted sum of its values.",
    "intro.attention.sqrt_dk": "The divisor is the paper's √d_k, here √{d_k} = {divisor}.",
    "intro.attention.number": "The divisor is {divisor}, a number set by hand: the note under the formulas says how "
                              "the paper divides.",
    "intro.attention.stable": "Softmax subtracts each row's largest score first: the weights are the same, and e^x "
                              "cannot overflow.",
    "intro.attention.naive": "Softmax is the post's e^x / Σ e^x, without subtracting the row's largest score: a "
                             "score above about 709 overflows and the row becomes NaN.",
    "intro.multihead": "Multi-head attention ends here: the heads' outputs are put side by side and multiplied by "
                       "$W^O$, which mixes them back to d_model numbers per token.",
    "intro.add_norm": "Every sub-layer (attention, feed-forward) is wrapped in a residual connection, which adds "
                      "the block's input X to the sub-layer's output, and a layer normalisation, which brings each "
                      "row (each token) to mean 0 and variance about 1, then scales it by γ and shifts it by β.",
    "intro.add_norm.post": "Post-norm, as in the paper: LayerNorm(X + Sublayer(X)). The sum is normalised, and the "
                           "normalised sum is the next sub-layer's input.",
    "intro.add_norm.pre": "Pre-norm, as in the Annotated Transformer: X + Sublayer(LayerNorm(X)). The LayerNorm "
                          "comes first and only the sub-layer reads it; the sum is not normalised and goes on as it "
                          "is, so each stack ends with one more LayerNorm (see the stack page).",
    "intro.add_norm.paper": "LayerNorm divides by √(σ² + ε), the form of Ba et al. (2016) that PyTorch's "
                            "nn.LayerNorm uses; the paper cites LayerNorm but writes no formula for it.",
    "intro.add_norm.blog": "LayerNorm divides by σ + ε, as the post's code does (PyTorch divides by √(σ² + ε)).",
    "seednote.add_norm": "Reading other notes? Peter Lau's blog post “The transformer's details” writes σ = √(1/d Σ "
                         "xᵢ): the standard deviation needs the squares, σ = √(1/d Σ (xᵢ − μ)²). The Shanghai Jiao "
                         "Tong lecture notes “Transformer 讲稿整理” (eq. 13) subtract Σⱼ Xᵢⱼ, a sum: it is the mean μ = "
                         "(1/d) Σⱼ Xᵢⱼ that is subtracted, under the root too. Neither writes ε, γ or β.",
    "intro.ffn": "The same small two-layer network is applied to every position separately: widen to d_ff, "
                 "apply a non-linearity, narrow back to d_model.",
    "intro.ffn.relu": "The non-linearity is ReLU, max(0, x), as in the paper: negative numbers become 0.",
    "intro.ffn.gelu": "The non-linearity is GELU, x·Φ(x), as in BERT and GPT (the paper uses ReLU): a smooth ReLU "
                      "that lets small negative numbers through, shrunk.",
    "intro.encoder_stack": "The encoder repeats attention and feed-forward N times; each layer's output is the "
                           "next layer's input, and the encoder's output, enc.out, is what every cross-attention of "
                           "the decoder reads. Layers are numbered from 1, like the paper's heads head_1 … head_h; "
                           "step names count from 0, as code does: enc.0 is layer 1.",
    "intro.encoder_stack.post": "In post-norm each layer ends with a LayerNorm (ln2), which is its output; enc.out "
                                "is the last layer's output.",
    "intro.encoder_stack.pre": "In pre-norm each layer ends with a residual sum (add2), which is not normalised; "
                               "enc.out is one more LayerNorm of the last layer's output, with its own γ and β.",
    "intro.decoder_input": "The decoder reads the target shifted right: a start token SOS, then the words so far. "
                           "They are embedded and positionally encoded like the source.",
    "seednote.qkv": "Checking the arithmetic of the blog post “The Random Transformer” by hand? Its expansion of E × "
                    "WK1 writes 4 where the second row has 3.99 (“(2.84 × 0) + (4 × 1) + …”); its results 9.99 and "
                    "6.84 use 3.99, as the app does.",
    "seednote.multihead": "Reading the Chinese notes that follow the input through the model in five stages (“在"
                          "Transformer模型中,输入的流动过程…”)? They give the size of Concat(head_1, …, head_8)·$W^O$ as "
                          "(8×64)×d_model = 512×512, which is the size of $W^O$. The output has one row per token: n "
                          "× d_model.",
    "intro.masked_attention": "In the decoder's self-attention a position may not look at later positions: the "
                              "causal mask adds −∞ above the diagonal, so softmax gives those cells weight 0.",
    "seednote.masked_attention": "Reading the Shanghai Jiao Tong lecture notes “Transformer 讲稿整理”? Their eq. 20 "
                                 "takes K = XW^K and V = XW^V from X, the encoder's input (eq. 21 even Q). In the "
                                 "decoder's self-attention Q, K and V all come from the decoder's input Y: K = YW^K, "
                                 "V = YW^V. Keys and values come from the encoder only in cross-attention (their eq. "
                                 "28).",
    "intro.cross_attention": "Cross-attention, the paper's encoder-decoder attention: the queries come from the "
                             "decoder and the keys and values from the encoder's output, so each target position "
                             "looks at the whole source sentence.",
    "intro.output": "A final linear layer scores every word of the vocabulary, and softmax turns the scores into "
                    "probabilities. The most likely word at the last position is the next token (greedy). Before "
                    "the softmax, the logit of `<unk>` is masked (−∞, like the decoder's causal mask): it stands for "
                    "words the vocabulary lacks, not for a word to write, so its probability is 0 and it is never "
                    "predicted, here or while generating. The training loss reads the same masked logits.",
    "intro.paper_vs_blog": "The blog post simplifies the paper in places, and its printed text and its code "
                           "sometimes disagree. Each difference is listed here with both forms; the label says whose "
                           "the second form is (the paper's, or for LayerNorm, for which the paper writes no formula, "
                           "Ba et al.'s and PyTorch's), and where a model option decides it, the form this app uses "
                           "now is marked.",
    # one line per step, keyed by ui.labels.description_key
    "desc.embed": "Each token's row of the lookup table (times √d_model where the formula says so).",
    "desc.pos": "One row per position, added to the embedding: it depends on the position, not on the token.",
    "desc.input": "Their sum: the input of the first layer.",
    "desc.attn.q": "One row per token in each head: what that token looks for.",
    "desc.attn.k": "One row per token in each head: what a query is compared with.",
    "desc.attn.v": "One row per token in each head: what the attention weights mix.",
    "desc.attn.scores": "Dot product of every query with every key.",
    "desc.attn.scaled": "The scores divided so softmax does not saturate.",
    "desc.attn.mask": "A position may not look at later positions.",
    "desc.attn.masked": "Scores plus mask: later positions become −∞.",
    "desc.attn.weights": "Softmax of each row: every row sums to 1.",
    "desc.attn.heads": "Per head, its values weighted by the attention weights and summed.",
    "desc.attn.concat": "The heads' outputs side by side.",
    "desc.attn.out": "The heads mixed back to d_model numbers per token.",
    "desc.add": "The block's input X plus the sub-layer's output.",
    "desc.ln": "Each row (each token) brought to mean 0 and variance about 1, then times γ plus β.",
    "desc.ffn.hidden": "Widen each row to d_ff numbers.",
    "desc.ffn.act": "The non-linearity (ReLU or GELU).",
    "desc.ffn.out": "Back to d_model numbers per row.",
    "cross.even": "Every weight here is within {tolerance} of 1/{n}: each query's scores are almost equal, so it "
                  "weighs all source words alike and its output is about the mean of the values. (In the worked "
                  "example the encoder's feed-forward output, several times larger than its input, swamps the "
                  "residual sum, so the encoder's outputs for hello and world are almost the same vector: compare "
                  "them on the encoder stack page.)",
    "desc.enc.out": "Read by every cross-attention: in post-norm the last layer's output itself, in pre-norm one "
                    "more LayerNorm of it.",
    "desc.dec.out": "In post-norm the last layer's output itself, in pre-norm one more LayerNorm of it.",
    "desc.logits": "A score for every vocabulary word at every decoder position.",
    "desc.vocab_mask": "The output's mask: −∞ for <unk>, which stands for words the vocabulary lacks and is never a "
                       "next token; 0 for every word.",
    "desc.masked_logits": "The logits plus the mask: <unk>'s becomes −∞, so its probability is exactly 0.",
    "desc.probs": "How likely each word is to be the next token.",
    # a step's name on screen (headers, a flow's buttons), keyed like its description: "step." + description_key[5:]
    "step.embed": "Embedding",
    "step.pos": "Positional encoding",
    "step.input": "Embedding + position",
    "step.attn.q": "Queries $Q$",
    "step.attn.k": "Keys $K$",
    "step.attn.v": "Values $V$",
    "step.attn.scores": "Scores",
    "step.attn.scaled": "Scaled scores",
    "step.attn.mask": "Causal mask",
    "step.attn.masked": "Masked scores",
    "step.attn.weights": "Attention weights",
    "step.attn.heads": "Head outputs",
    "step.attn.concat": "Concat",
    "step.attn.out": "Output projection $W^O$",
    "step.attn.dropout": "Dropout of the weights",
    "step.add": "Residual add",
    "step.ln": "LayerNorm",
    "step.ffn.hidden": "First linear layer",
    "step.ffn.act": "Activation",
    "step.ffn.out": "Second linear layer",
    "step.enc.out": "Encoder output",
    "step.dec.out": "Decoder output",
    "step.logits": "Logits",
    "step.vocab_mask": "Vocabulary mask",
    "step.masked_logits": "Masked logits",
    "step.probs": "Probabilities",
    "step.dropout": "Dropout",
    "step.drop": "Dropout of the output",
    # a parameter's name on screen (editors), keyed by ui.labels.param_key; its symbol is ui.labels.PARAM_TEX
    "param.embed.src": "source embedding table",  # its words: ui.labels.param_words_key
    "param.embed.src.shared": "embedding table, one for source and target",
    "param.embed.src.shared.tied": "embedding table, one for source, target and the output layer (transposed)",
    "param.embed.tgt": "target embedding table",
    "param.embed.tgt.tied": "target embedding table, the output layer's weights too (transposed)",
    "param.pos.learned": "learned positional encoding",
    "param.W_Q": "query weights",
    "param.W_K": "key weights",
    "param.W_V": "value weights",
    "param.W_O": "output projection",
    "param.b_Q": "query bias",
    "param.b_K": "key bias",
    "param.b_V": "value bias",
    "param.b_O": "output bias",
    "param.W_1": "first linear layer's weights",
    "param.W_2": "second linear layer's weights",
    "param.b_1": "first linear layer's bias",
    "param.b_2": "second linear layer's bias",
    "param.gamma": "LayerNorm scale",
    "param.beta": "LayerNorm shift",
    "param.unembed.W": "output layer's weights",
    "param.unembed.b": "output layer's bias",
    # overview
    "overview.flow": "Where the data is now",
    "overview.src": "Source tokens",
    "overview.tgt": "Decoder input",
    "overview.next": "Next token (greedy)",
    "overview.prob": "probability",
    "overview.steps": "Data flows up, from the sentences at the bottom to the next token at the top; the encoder's "
                      "output feeds the decoder's cross-attention. Click a box to open the page of its step; each "
                      "step page ends with links to the step before and after it. Every page follows the same "
                      "numbers.",
    "nav.previous": "Previous: {page}",
    "nav.next": "Next: {page}",
    "overview.shapes": "{n_src} source tokens, {n_tgt} decoder positions, d_model = {d_model}, {h} heads, "
                       "N = {n_layers} layer(s)",
    # tokens page
    "tokens.table": "Tokens",
    "tokens.token": "token",
    "tokens.id": "id",
    "tokens.known": "in vocabulary",
    "tokens.yes": "yes",
    "tokens.no": "no: new, weights drawn from the seed",
    # output page
    "output.top": "The {k} most likely next tokens, of {n}",
    "output.position": "Decoder position",
    # compare page
    "compare.post": "The blog",
    "compare.side.paper": "The paper",
    "compare.side.pytorch": "Ba et al. and PyTorch (the paper writes no formula)",
    "compare.side.code": "The post's code, which made its numbers (the app's Hello World)",
    "compare.side.exact": "Computed, not retyped",
    "compare.side.app": "This app",
    "compare.side.stable": "The stable form (both presets')",
    "compare.now": "this app now",
    "compare.pe": "Positional encoding of “World” (position 1)",
    "compare.weights": "Head 1 attention weights: divide by √3 (paper) or by 30 (blog)",
    "compare.ln": "LayerNorm of the first row of $E + Z$: the post's code vs PyTorch's form",
    "compare.divisor_sqrt": "÷ √3",
    "compare.divisor_30": "÷ 30",
    "compare.form_blog": "(x − μ)/(σ + ε), ε = 10⁻⁶",
    "compare.form_paper": "(x − μ)/√(σ² + ε), ε = 10⁻⁵ (PyTorch's nn.LayerNorm)",
    # generation page
    "section.generate": "Generate & train",
    "page.generate": "Generation (decoding)",
    "intro.generate": "At inference the decoder writes the translation one token at a time: it starts from SOS, "
                      "picks a next token from the last row's probabilities, appends it to its input and runs "
                      "again, until it writes EOS. The encoder needs to run only once, as its output does not depend "
                      "on what the decoder writes; the decoder runs once per new token, over the whole prefix, one "
                      "step after another, which is why decoding is slower than encoding. (The app runs the whole "
                      "pass, encoder included, at each step below, so that any step can be opened on every page; "
                      "the encoder's numbers come out the same each time.) "
                      "Always taking the most likely token (greedy) can miss a sentence that is more likely as a "
                      "whole; sampling adds variety, beam search keeps several sentences going at once (the second tab "
                      "shows an example).",
    "gen.model": "Model",
    "gen.m.trained": "trained on the corpus",
    "gen.m.current": "the pages' model",
    "gen.m.trained_note": "A model that has learned the shipped English → Spanish corpus ({n} sentence pairs): "
                          "{sizes} Trained from seed 0 by `python -m engine train --corpus en-es --out {file}` (the "
                          "file ships with the app). It does not use the "
                          "sidebar's preset, options or edits; a word it never learned gets weights of its own, drawn "
                          "from the seed.",
    "gen.m.current_note": "The model every other page shows, as the sidebar describes it. {model}",
    "gen.m.untrained": "Random weights have learned nothing: expect a random sentence.",
    "gen.strategy": "Strategy",
    "gen.s.greedy": "greedy",
    "gen.s.temperature": "temperature",
    "gen.s.top_k": "top-k",
    "gen.s.top_p": "top-p (nucleus)",
    "gen.s.beam": "beam search",
    "gen.temperature": "Temperature T",
    "gen.k": "k (keep the k most likely)",
    "gen.p": "p (keep the most likely until they add up to p)",
    "gen.width": "Beam width",
    "gen.alpha": "Length normalisation α",
    "gen.max_len": "Most tokens to write",
    "gen.seed": "Sampling seed",
    "gen.failed": "No token can be chosen: {error}",
    "gen.sentence": "Generated:",
    "gen.finished": "The model wrote EOS after {n} step(s).",
    "gen.stopped": "Stopped at the limit of {n} token(s) before the model wrote EOS.",
    "gen.prev": "◀ Previous",
    "gen.next": "Next ▶",
    "gen.play": "▶ Play",
    "gen.pause": "⏸ Pause",
    "gen.step_label": "Step",
    "gen.prefix": "**Decoder input at this step** ({n} token(s), SOS first):",
    "gen.chosen": "**Chosen next token:** `{token}` — the model's probability {p}, its probability in the "
                  "distribution it was drawn from {q}.",
    "gen.mask": "Masked self-attention weights (layer 1, head 1): the mask grows with the input",
    "gen.probs": "The model's next-token probabilities (the last row of P): the {k} most likely of {n}",
    "gen.sampled": "The distribution the token was drawn from (after temperature / top-k / top-p): the {k} most "
                   "likely of {n}",
    "gen.open_step": "Show this step's forward pass on every page",
    "gen.score": "score",
    "gen.beam_best": "**Best sentence:** {text} — log P = {logp}, score = {score}",
    "gen.beam_legend": "Each box is a prefix with its log probability; where a sentence ends, also its "
                       "length-normalised score; p is the model's probability of its last token. Grey: the step's "
                       "pruned prefixes (not among the k best, k being the beam width), all of them on hover; thick "
                       "border: finished with EOS; red: the best sentence's path.",
    "gen.pruned": "{n} pruned",
    "gen.pruned_best": "best: {token} {logp}",
    "gen.col.rank": "rank",
    "gen.col.text": "sentence",
    "gen.col.length": "length",
    "gen.col.finished": "ended with EOS",
    "gen.compare": "Greedy vs beam search: an example where they disagree",
    "gen.tab.run": "Decode the sentence",
    "gen.tab.compare": "Greedy vs beam search",
    "gen.compare_setup": "A small paper-style model (d_model 16, 2 heads, 1 layer, random weights) translating "
                         "“{src}”, beam width {width}.",
    "gen.compare_why": "Greedy takes the most likely token at each step: {greedy}, log P = {lg}. Beam search also "
                       "keeps the runner-up first word and finds {beam}, log P = {lb}. A sentence's probability is "
                       "the product of its tokens' probabilities, and with random weights each of them is small: the "
                       "beam's sentence starts with a slightly less likely word but is one token shorter, so its "
                       "product, and its log P, is larger.",
    "gen.compare_open": "Open this example in the app",
    # training page
    "page.train": "Training",
    "intro.train": "The model learns by **teacher forcing**: the decoder reads the correct target shifted right "
                   "(SOS first) and at every position is scored by the cross-entropy of the next correct token. "
                   "Backpropagation gives every weight its gradient, and the optimiser (Adam by default, with the "
                   "paper's warm-up schedule) moves the weights a little against it. Train a small model on our corpus "
                   "in the second tab: its weights then become the starting point of every page.",
    "train.loss": "The loss of the current sentence pair",
    "train.loss_intro": "The source sentence and the target in the sidebar, as one training example (the target "
                        "prefix is the whole target sentence here).",
    "train.label_smoothing": "Label smoothing ε",
    "train.col.position": "i",
    "train.col.input": "decoder input",
    "train.col.target": "target y_i",
    "train.col.p_target": "P(y_i)",
    "train.col.loss": "loss ℓ_i",
    "train.mean_loss": "Mean loss L",
    "train.backward": "Backpropagation: the gradient of every step and weight",
    "train.backward_intro": "Going backwards from the logits, each step passes the gradient of the loss on to its "
                            "inputs by its own rule; the weights' gradients are what the optimiser uses.",
    "train.grad_step": "Gradient of a step",
    "train.grad_param": "Gradient of a weight",
    "train.corpus_title": "Train on the corpus",
    "train.corpus_intro": "A small model with the paper's architecture (d_model {d_model}, {n_heads} heads, d_ff "
                          "{d_ff}, {n_layers} layers, random start) learns a tiny parallel corpus written for this "
                          "app. The Stop button keeps what was learned so far.",
    "train.corpus": "Corpus",
    "train.corpus.en-es": "English → Spanish",
    "train.corpus.en-zh": "English → Chinese",
    "train.pairs": "The {n} sentence pairs",
    "train.col.src": "source",
    "train.col.tgt": "target",
    "train.col.before": "before training",
    "train.col.after": "after training",
    "train.optimizer": "Optimiser",
    "train.steps": "Steps",
    "train.batch_size": "Pairs per step",
    "train.warmup": "Warm-up steps",
    "train.lr_scale": "Learning-rate scale s",
    "train.dropout": "Dropout P_drop",
    "train.seed": "Seed",
    "train.step": "step",
    "train.lr": "learning rate η",
    "train.loss_axis": "loss (log scale)",
    "train.start": "Train",
    "train.stop": "Stop",
    "train.stop_help": "Stops the run; the weights learned so far are kept.",
    "train.progress": "Step {step} of {steps}: loss {loss}",
    "train.done": "Trained for {steps} steps; last loss {loss}. Every page now uses these weights.",
    "train.done_stopped": "Stopped after {steps} steps; last loss {loss}. Every page now uses these weights.",
    "train.diverged": "Training stopped: {error}",
    "train.replayed": "These settings were already trained on this server, so the result is shown at once.",
    "train.exact": "Greedy decoding reproduces **{exact} of {n}** training targets exactly.",
    "train.attention": "Cross-attention of the last decoder layer (head 1) on “{src}” → “{tgt}”:",
    "train.files": "Save and load weights",
    "train.tab.loss": "Loss and gradients",
    "train.files_intro": "Download the current weights as a .npz file, or load one saved by this app (or by "
                         "`python -m engine train --out`): it becomes the starting point of every page.",
    "train.download": "Download the weights (.npz)",
    "train.upload": "Load weights (.npz)",
    "train.upload_bad": "{name} could not be loaded: {error}",
    # encoder and decoder stacks
    "stack.changes": "What each layer changes",
    "stack.measure": "Measure",
    "stack.change": "Change",
    "stack.cosine": "Direction kept (cosine)",
    "stack.norm": "Length",
    "stack.change_note": "How far layer l moves each position's vector: the length of its output minus its input, "
                         "$x^{(l)} - x^{(l-1)}$. Small where the layer lets a token through almost as it was, large "
                         "where it rewrites it.",
    "stack.cosine_note": "The cosine between each position's vector after layer l and before it: 1 where the layer "
                         "kept its direction, 0 where it turned it at right angles, −1 where it reversed it. NaN: a "
                         "vector of zeros has no direction.",
    "stack.norm_note": "The length of each position's vector: the stack's input, then each layer's output.",
    "stack.layer": "Layer {l}",
    "stack.one_layer": "One layer in detail",
    "stack.focus": "{sublayer}: where each position looks most",
    "stack.focus_note": "Per head, the token each position gives its largest attention weight, and that weight. "
                        "Spread evenly over the {k} tokens, every weight would be {even}.",
    "stack.focus_note_masked": "Per head, the token each position gives its largest attention weight, and that "
                               "weight. The mask lets position i (from 0) see the first i + 1 tokens only: spread "
                               "evenly, every weight would be 1/(i + 1).",
    "stack.layer_output": "Output of layer {l}",
    "stack.last_output": "Output of layer {l}: the stack's output",
    "stack.same": "{out} is layer {l}'s output, {name}: the same numbers, drawn once.",
    "stack.final_norm": "The stack's output",
    "stack.final_norm_note": "Pre-norm: {out} is one more LayerNorm of layer {l}'s output ({name}), with its own γ "
                             "and β.",
    # decoder pages, dropout, the whole attention equations
    "page.dec_add_norm": "Add & LayerNorm",
    "page.dec_ffn": "Feed-forward",
    "page.decoder_stack": "The decoder stack",
    "page.dropout": "Dropout (training)",
    "intro.dec_add_norm": "Each of the decoder's three sub-layers (masked self-attention, cross-attention, "
                          "feed-forward) is wrapped like the encoder's, in a residual connection and a layer "
                          "normalisation: post-norm (the paper) adds the sub-layer's input to its output, then "
                          "normalises each row; pre-norm normalises the input first and adds the sub-layer's output "
                          "to the unnormalised input.",
    "intro.dec_ffn": "The decoder's third sub-layer is the same kind of position-wise network as the encoder's, with "
                     "its own weights: widen to d_ff, apply the activation, narrow back to d_model.",
    "intro.decoder_stack": "The decoder repeats its three sub-layers N times; every layer's cross-attention reads "
                           "the same encoder output. The last layer's output (after a final LayerNorm in pre-norm) "
                           "goes to the output layer.",
    "intro.dropout": "In training, dropout sets each cell of some steps to 0 with probability P_drop and divides the "
                     "others by 1 − P_drop, so every cell keeps its expected value. The paper (section 5.4) applies "
                     "it to the sums of embedding and positional encoding and to each sub-layer's output, before "
                     "the residual add; like the Annotated Transformer and PyTorch, this model also applies it to "
                     "the attention weights. The other pages show the model at inference, without dropout; here the "
                     "same model runs once in training mode, and the seed picks the cells that are dropped. Each "
                     "dropout step follows the step it drops from.",
    "sublayer.self_attn": "Self-attention",
    "sublayer.masked": "Masked self-attention",
    "sublayer.cross": "Cross-attention",
    "sublayer.ffn": "Feed-forward",
    "depart.badge": "Not as in the paper",
    "depart.attn_divisor": "This model divides the scores by {divisor}; the paper divides by √d_k (here √{d_k}). The "
                           "post divides by 30 because with √3 its weights saturate to 0 and 1.",
    "depart.attn_divisor.button": "Divide by √d_k, as the paper does",
    "depart.pos_encoding.blog_table": "This is the post's printed table, rounded by hand (cos(0.01) = 0.99995 shows "
                                      "as 0.99), kept so the numbers match the post's; the paper's sinusoid gives "
                                      "columns 2i and 2i + 1 the same exponent 2i/d_model and is not rounded.",
    "depart.pos_encoding.blog": "This is the post's formula, each column j with its own exponent 2j/d_model; the "
                                "paper's sinusoid gives columns 2i and 2i + 1 the same exponent 2i/d_model.",
    "depart.pos_encoding.learned": "This is a learned table; the paper adds a sinusoid (it found learned positions "
                                   "gave nearly identical results).",
    "depart.pos_encoding.none": "There is no positional encoding here; the paper adds a sinusoid.",
    "depart.pos_encoding.button": "Use the paper's sinusoid",
    "depart.embed_scale": "The embeddings are not multiplied by √d_model here, as in the post; the paper multiplies "
                          "them (section 3.4).",
    "depart.embed_scale.button": "Multiply by √d_model, as the paper does",
    "depart.shared_embeddings": "Source and target have an embedding table each here; the paper shares one "
                                "(section 3.4).",
    "depart.shared_embeddings.button": "Share one table, as the paper does",
    "depart.d_k": "Each head is d_k = {d_k} wide (d_v = {d_v}) with d_model = {d_model} and h = {h}; the paper "
                  "takes d_k = d_v = d_model / h, so that the h heads together are d_model wide. (The post's example "
                  "has d_k = 3 with d_model = 4 and h = 2.)",
    "depart.d_k.button": "Use d_k = d_v = d_model / h = {width}",
    "depart.attn_bias": "The projections add biases b^Q, b^K, b^V, b^O here, as PyTorch's nn.MultiheadAttention "
                        "does; the paper's formulas have none.",
    "depart.attn_bias.button": "Drop the biases, as the paper's formulas do",
    "depart.norm_placement": "This is pre-norm, x + Sublayer(LayerNorm(x)), as the Annotated Transformer does; the "
                             "paper normalises after the residual add: LayerNorm(x + Sublayer(x)).",
    "depart.norm_placement.button": "Use post-norm, as the paper does",
    "depart.layer_norm": "This LayerNorm divides by σ + ε, as the post's code does. The paper writes no formula for "
                         "LayerNorm: it cites Ba et al. (2016), whose form (x − μ)/√(σ² + ε) PyTorch's nn.LayerNorm "
                         "uses.",
    "depart.layer_norm.button": "Divide by √(σ² + ε) (Ba et al., PyTorch)",
    "depart.activation": "The feed-forward network uses GELU here, as BERT and GPT do; the paper uses ReLU, max(0, x).",
    "depart.activation.button": "Use ReLU, as the paper does",
    "depart.ffn_bias": "The feed-forward network has no biases here; the paper's FFN(x) = max(0, xW₁ + b₁)W₂ + b₂ has "
                       "b₁ and b₂.",
    "depart.ffn_bias.button": "Add the biases, as the paper does",
    "depart.tied_output": "The output layer has a matrix of its own here, as in the post; the paper reuses the "
                          "embedding matrix, transposed (section 3.4).",
    "depart.tied_output.button": "Reuse the embedding, as the paper does",
    "depart.no_paper_value": "d_model is not divisible by h here, so no d_k gives the paper's form: choose sizes "
                             "that divide.",
    "depart.drops_weights": "The trained or loaded weights fit only their own settings: the button goes back to the "
                            "preset's random weights from the seed.",
    "formulas.side_by_side": "The {h} heads' $W_i^Q$ are slices of one matrix: side by side they make $W^Q$, "
                             "{d_model} × {width} (d_model × h·d_k; the paper takes d_k = d_model/h, so it is "
                             "d_model × d_model). The forward pass multiplies X by this whole matrix once and splits "
                             "the product into heads; head {head}'s {d_k} columns are marked. $W^K$ and $W^V$ are "
                             "split the same way.",
    "formulas.first_rows": "Its first {rows} of {d_model} rows (the whole matrix is too big to send to the browser "
                           "on every change):",
    "derive.qkv": "Worked out by sympy: $Q = X W^Q$ entry by entry",
    "derive.qkv.text": "sympy writes out the first rows and columns of head {head}'s queries: each entry is a row of "
                       "X (`{x}`) times a column of $W^Q_{head}$, plus the bias where the model has one. Then the "
                       "same with the current numbers (rounded), and their sums: the numbers of Q above.",
    "derive.qkv.wide": "Each entry of Q is a sum of d_model = {d_model} products here; sympy writes the sums out for "
                       "d_model up to {most} (the blog's Hello World, for one).",
    "derive.softmax": "Worked out by sympy: the softmax Jacobian",
    "derive.softmax.text": "How each weight $s_i$ of a row changes with each score $z_j$: sympy differentiates a row of "
                           "3 scores (the quotient rule) and writes the result with the weights themselves. The "
                           "backward pass multiplies each row's gradient by it (its last line).",
    "derive.layer_norm": "Worked out by sympy: the LayerNorm gradient",
    "derive.layer_norm.paper.text": "How each normalised $\\hat x_k$ of a row changes with each input $x_i$ (d numbers "
                                    "a row): $x_i$ moves $x_k$ itself when $i = k$, the mean μ and the variance σ². "
                                    "sympy applies the chain rule through all three and writes the result with the "
                                    "x̂. Times the gradient of x̂, ȳ ⊙ γ, and summed over k, it is the backward "
                                    "pass's rule (training page).",
    "derive.layer_norm.blog.text": "How each normalised $\\hat x_k$ of a row changes with each input $x_i$ (d numbers "
                                   "a row), for the blog's form, which divides by σ + ε: $x_i$ moves $x_k$ itself "
                                   "when $i = k$, the mean μ and the variance σ². sympy applies the chain rule through "
                                   "all three and writes the result with the x̂. Times the gradient of x̂, ȳ ⊙ γ, and "
                                   "summed over k, it is the backward pass's rule (training page).",
    "derive.cross_entropy": "Worked out by sympy: the gradient of cross-entropy after softmax",
    "derive.cross_entropy.text": "sympy differentiates one position's loss for 3 logits z and a target distribution q "
                                 "that sums to 1 (one-hot without label smoothing): with p = softmax(z), the "
                                 "gradient is p − q, and with a one-hot target, p − onehot(y). The mean over the "
                                 "positions then divides it by |I|.",
    "derive.pe_rotation": "Worked out by sympy: PE(pos + k) is a rotation of PE(pos)",
    "derive.pe_rotation.text": "The paper's encoding puts, in each pair of columns (2i, 2i + 1), the sine and cosine "
                               "of one frequency: ω·pos with ω = 1/10000^(2i/d_model). sympy's "
                               "angle-sum identities turn the pair at pos + k into a matrix R(k) times the pair at "
                               "pos. R(k) depends on k and ω, not on pos, and it is a rotation (RᵀR = I): a "
                               "shift by k is the same linear map at every position.",
    "derive.pe_rotation.numbers": "With the current numbers, the first pair of columns (ω = 1): row 1 of PE is R(1) "
                                  "times row 0.",
    "derive.pe_rotation.other": "This holds for the paper's sinusoidal encoding. The model uses another one now "
                                "(sidebar), whose pairs of columns are not the sine and cosine of one frequency.",
    "dropout.place": "Where",
    "dropout.place.src": "Source input",
    "dropout.place.tgt": "Decoder input",
    "dropout.place.enc": "Encoder layer",
    "dropout.place.dec": "Decoder layer",
    "dropout.which": "Which dropout",
    "dropout.weights": "{sublayer}: weights",
    "dropout.output": "{sublayer}: output",
    "desc.dropout": "Training only: random cells of embedding plus positional encoding set to 0, the rest divided by "
                    "1 − P_drop.",
    "desc.attn.dropout": "Training only: random weights set to 0, the rest divided by 1 − P_drop.",
    "desc.drop": "Training only, before the residual add: random cells of the sub-layer's output set to 0, the rest "
                 "divided by 1 − P_drop.",
}

ZH = {
    "section.start": "开始",
    "section.encoder": "编码器",
    "section.decoder": "解码器",
    "section.compare": "对比",
    "lang.label": "语言",
    "ctl.digits": "有效数字",
    "ctl.digits_help": "所有显示的数（矩阵、热力图、单元格的计算过程）保留的有效数字位数。只改变显示：模型仍用全部位数计算。",
    "ctl.preset": "预设",
    "ctl.src": "源句子",
    "ctl.tgt": "目标前缀（解码器读入 SOS + 这些词）",
    "ctl.tgt_sos": "博客那一步：只有 SOS",
    "ctl.tgt_default": "目标句“{target}”（解码器三个位置）",
    "ctl.options": "选项：有效数字、模型",
    "ctl.sizes": "模型规模",
    "ctl.seed": "随机种子",
    "ctl.divisor": "注意力缩放除数",
    "ctl.divisor.sqrt": "√d_k（论文）",
    "ctl.divisor.number": "一个数",
    "ctl.divisor.value": "注意力分数除以",
    "ctl.layer_norm": "层归一化形式",
    "ctl.eps": "层归一化 ε",
    "ctl.norm_placement": "归一化位置",
    "ctl.pos_encoding": "位置编码",
    "ctl.activation": "激活函数",
    "ctl.softmax": "softmax 形式",
    "ctl.embed_scale": "嵌入乘以 √d_model",
    "ctl.attn_bias": "注意力中的偏置（Q、K、V、O）",
    "ctl.ffn_bias": "前馈网络中的偏置",
    "ctl.shared_embeddings": "源与目标共用一个嵌入表",
    "ctl.tied_output": "输出层 = 嵌入矩阵的转置",
    "ctl.reset_edits": "重置所有修改过的权重",
    "ctl.drop_weights": "回到预设的随机权重",
    "model.in_use_line": "**当前模型**：{model}",
    "model.sizes": "d_model = {d_model}，h = {h}，d_k = {d_k}，d_ff = {d_ff}，N = {n_layers}。",
    "model.card": "{sizes}{origin}",
    "model.from.hello-world": "权重：博客给出数值的地方用博客的数值（hello、world、SOS 的嵌入，以及形状相符时第一个编码器层的 "
                              "$W^Q$、$W^K$、$W^V$、$W^O$），其余由随机种子 {seed} 随机生成。",
    "model.from.paper": "权重：由随机种子 {seed} 随机生成（Xavier 均匀初始化，和 PyTorch 的 nn.Transformer 一样），"
                        "什么也没学过。",
    "model.from.trained": "权重：在本服务器上用{corpus}语料训练了 {steps} 步，起点是预设“{preset}”的随机权重（种子 {seed}）。",
    "model.from.uploaded": "权重：从文件 {file} 载入（由预设“{preset}”、种子 {seed} 得到）。",
    "model.from.shipped": "权重：随应用提供的模型，在{corpus}语料上训练过（engine/data），来自预设“{preset}”（种子 {seed}）。",
    "model.from.unknown": "权重：在本服务器上训练或载入；没有记录它们的来历（预设“{preset}”，种子 {seed}）。",
    "model.kept": "它们的链接（weights={id}）在本服务器保留它们期间有效：服务器最多保留 {files} 个权重文件（{mb} MB），"
                  "需要空间时先删除最久未使用（打开或保存）的。没有时间限制。",
    "model.kept_memory": "这些权重没能存到服务器的磁盘上：它们的链接（weights={id}）只在这个服务器进程中有效，而且只在它们属于"
                         "最近使用的 {n} 组权重时有效，进程重启后失效。",
    "model.text_replaced": "训练用它学过的一个句对 {new_src} → {new_tgt} 替换了你的句子 {src} → {tgt}。",
    "model.text_restore": "换回你的句子",
    "ctl.edits": "部分权重已修改：每一页都使用修改后的权重。",
    "ctl.layer": "层",
    "ctl.layer_help": "层从 1 开始编号。步骤名像代码一样从 0 开始计数：enc.0 和 dec.0 是第 1 层。",
    "ctl.share": "复制链接",
    "ctl.share_help": "链接包含所有设置和修改，以及本页所显示的内容：头、步骤、层和单元格。",
    "ctl.share_done": "链接已复制",
    "ctl.share_failed": "无法复制：请直接复制页面地址",
    "choice.paper": "√(σ² + ε)（PyTorch；论文没有给出公式）",
    "choice.blog": "博客",
    "choice.post": "后置归一化 (Post-Norm，论文)",
    "choice.pre": "前置归一化 (Pre-Norm，Annotated Transformer)",
    "choice.sinusoidal": "正弦/余弦（论文）",
    "choice.blog_table": "博客列出的表",
    "choice.learned": "可学习",
    "choice.none": "无",
    "choice.relu": "ReLU",
    "choice.gelu": "GELU",
    "choice.stable": "稳定（先减去每行最大值）",
    "choice.naive": "朴素（博客的写法）",
    "preset.hello-world": "Hello World（博客的例子）",
    "preset.paper": "论文（基础模型）",
    "msg.kept": "{error} —— 已保留之前的设置。",
    "msg.url": "链接中的一部分被忽略：{detail}",
    "msg.new_words": "新词 **{words}** 不在模型的 {n} 个 token 的词汇表中。它们不共用一个 `<unk>`，而是各自得到一行"
                     "词嵌入和一列输出层权重，由随机种子（{seed}）和这个词本身决定，与博客给它的词随机取值的方式相同："
                     "同一个词总是得到同样的数字，链接也能重现它们。模型从未学过这些词。",
    "msg.nonfinite": "部分数值不是有限数（∞ 或 NaN），最早出现在步骤 {step}。",
    "msg.edit_bad": "{param}[{index}]：{value!r} 不是介于 −1,000,000 和 1,000,000 之间的有限数；已保留原值。",
    "msg.edits_dropped": "{n} 处修改与模型新的形状不符，已被丢弃。",
    "msg.too_big": "为保证页面流畅，{field} 在本应用中最多为 {high}（请求的是 {value}）。",
    "msg.too_long": "{side}有 {n} 个 token；本应用最多显示 {high} 个。",
    "msg.text_cut": "{side}有 {n} 个字符；只保留前 {high} 个。",
    "msg.empty": "源句子为空：请至少输入一个词。",
    "msg.weights_gone": "这个链接中训练好的权重（{id}）已不在本服务器上；现在使用预设的随机权重。",
    "msg.upload_unpacks": "它解压后有 {mb} MB；最多载入 {high} MB",
    "msg.upload_odd_words": "词汇表中有 {n} 个条目不是单个词，任何句子都到不了它们",
    "msg.not_divisible": "d_model（{d_model}）不能被 n_heads（{n_heads}）整除：请选择能整除的数值，或自己设置 d_k 和 d_v",
    "side.src": "源句子",
    "side.tgt": "目标前缀",
    "view.shape": "形状",
    "view.drill": "这个格子是怎么算出来的？",
    "view.drill_hint": "点击热力图中的格子，或在这里选择。方括号中的下标像代码一样从 0 开始：逐头步骤的第一个下标 0 "
                       "是第 1 个头，第 0 行是第一个 token（pos = 0）。",
    "view.row": "行",
    "view.col": "列",
    "view.head": "头",
    "view.step": "步骤",
    "view.edit": "修改 {name}",
    "view.edit_hint": "双击格子，输入数字并回车：之后的每一步都会重新计算。",
    "view.edit_hint_cell": "选择行和列，输入数字并回车：之后的每一步都会重新计算。",
    "view.reset": "重置 {name}",
    "view.slide_hint": "也可以拖动滑块再松开：它的范围是当前值 ± 2 × |当前值|（至少 ± 1，总在 ± 1,000,000 以内），松开后会以新值为中心。",
    "view.slider": "滑块",
    "view.slider_row": "用滑块修改一行",
    "view.slider_pick": "选择一行：它的每个数都有一个滑块",
    "view.edit_window": "方框中的数是所选的格子；这里显示 {n_rows} × {n_cols} 矩阵的第 {rows} 行、第 {cols} 列。",
    "view.compare": "与未修改的模型比较",
    "view.unchanged": "这些修改没有改变这一步：它与未修改的模型相同。",
    "view.difference": "修改后减去修改前：{total} 个数中有 {changed} 个改变了（数量不多时用方框标出），最大变化为 {largest}。",
    "view.unedited_value": "在未修改的模型中这个格子是 {value}；修改使它变化了 {change}。",
    "view.big": "这个矩阵是 {rows} × {cols}：只显示热力图。",
    "view.plain": "纯文本",
    "view.input": "输入",
    "page.overview": "总览",
    "page.tokens": "Token 与词嵌入",
    "page.positional": "位置编码",
    "page.qkv": "每个头的 Q、K、V",
    "page.attention": "注意力分数、缩放与 softmax",
    "page.multihead": "拼接 (Concat) 与 $W^O$",
    "page.add_norm": "残差连接与层归一化",
    "page.ffn": "前馈网络",
    "page.encoder_stack": "编码器层的堆叠",
    "page.decoder_input": "解码器输入",
    "page.masked_attention": "带掩码的自注意力",
    "page.cross_attention": "交叉注意力",
    "page.output": "输出与下一个 token",
    "page.paper_vs_blog": "论文与博客的差异",
    "intro.overview": "原始的 Transformer 用**编码器**读入句子，用**解码器**逐个 token 写出译文。每一页都跟踪同一组数字"
                      "经过一个步骤。修改左侧或页面上的句子、选项或任意权重，之后的每个数字都会随之改变。",
    "intro.tokens": "句子被切分成 token（这里是单词）。每个 token 的 id 选出嵌入矩阵中的一行：一个由模型学习得到的、"
                    "长度为 d_model 的向量。",
    "intro.tokens.embed_scale": "和论文（3.4 节）一样，这一行先乘以 √d_model，再加上位置编码。",
    "intro.tokens.no_embed_scale": "这一行按原样使用，和博客一样；论文会把它乘以 √d_model（选项“嵌入乘以 √d_model”）。",
    "intro.positional": "注意力本身不考虑词序，所以要把位置编码（每个位置一个向量）加到词嵌入上。位置和论文公式中一样"
                        "从 0 开始计数：pos = 0 是第一个 token。",
    "intro.positional.sinusoidal": "这里用的是论文的位置编码：不同频率的正弦和余弦，偶数列 2i 用 sin，奇数列 2i + 1 用 "
                                   "cos，两列共用指数 2i/d_model。",
    "intro.positional.blog": "这里用的是博客的公式：偶数列用 sin，奇数列用 cos，但每一列 j 有自己的指数 2j/d_model"
                             "（论文让第 2i 列和第 2i + 1 列共用指数 2i/d_model）。",
    "intro.positional.blog_table": "这里用的是博客列出的表：位置 0 和 1 的两行、每行四个数，由作者手工取整"
                                   "（cos(0.01) = 0.99995 写成 0.99）。更多的位置或列按博客的公式计算，保留 2 位小数；"
                                   "公式和每个格子的算式都会注明。",
    "intro.positional.learned": "这里的位置编码是学习得到的：取表 P 的第 pos 行，这张表像词嵌入一样训练，没有公式"
                                "（BERT 就是这样；论文发现它与正弦编码效果相当）。",
    "intro.positional.none": "这里没有位置编码（PE = 0）：模型无法区分词的顺序。",
    "intro.qkv": "每个头用自己的三个矩阵乘以输入：查询（token 在找什么）、键（token 提供什么）和值（token 传递什么）。",
    "intro.qkv.attn_bias": "每个投影还要加上一个偏置（b^Q、b^K、b^V），和 PyTorch 的 nn.MultiheadAttention 一样；论文的公式里没有。",
    "intro.qkv.no_attn_bias": "投影没有偏置，只乘以矩阵，和论文的公式以及博客一样。",
    "intro.attention": "缩放点积注意力：每个查询与每个键做点积，再做缩放使数值不至于过大，然后用 softmax 变成和为 1 "
                       "的注意力权重。每个头的输出是其值向量的加权和。",
    "intro.attention.sqrt_dk": "除数是论文的 √d_k，这里 √{d_k} = {divisor}。",
    "intro.attention.number": "除数是 {divisor}，一个手动设定的数：公式下方的说明给出论文的除法。",
    "intro.attention.stable": "softmax 先减去每行最大的分数：权重不变，而 e^x 不会溢出。",
    "intro.attention.naive": "softmax 采用博客的 e^x / Σ e^x，不减去每行最大的分数：分数超过约 709 时会溢出，整行变成 NaN。",
    "intro.multihead": "多头注意力的最后一步：把各个头的输出拼接 (Concat) 起来，再乘以 $W^O$（输出投影），把它们混合回每个 "
                       "token 的 d_model 个数。",
    "seednote.multihead": "在读那篇把输入的流动分成五个阶段讲解的中文笔记（开头是“在Transformer模型中,输入的流动过程……”）？它把 Concat(head_1, …, "
                          "head_8)·$W^O$ 的大小写成 (8×64)×d_model = 512×512，这其实是 $W^O$ 的大小。输出每个 token 一行：n × d_model。",
    "intro.add_norm": "每个子层（注意力、前馈网络）都包在残差连接和层归一化之中：残差连接把这一块的输入 X 加到子层的输出上，"
                      "层归一化把每一行（每个 token）变成均值 0、方差约为 1，然后乘以 γ、加上 β。",
    "intro.add_norm.post": "后置归一化 (Post-Norm)，和论文一样：LayerNorm(X + Sublayer(X))。先相加再归一化，归一化后的"
                           "和就是下一个子层的输入。",
    "intro.add_norm.pre": "前置归一化 (Pre-Norm)，和 Annotated Transformer 一样：X + Sublayer(LayerNorm(X))。先做层归一化，"
                          "只有子层读取它；相加的结果不再归一化，直接往后传，所以每个堆叠的最后还有一次层归一化（见堆叠页）。",
    "intro.add_norm.paper": "层归一化除以 √(σ² + ε)，这是 Ba 等人（2016）的形式，PyTorch 的 nn.LayerNorm 也用它；"
                            "论文引用了层归一化，但没有写出公式。",
    "intro.add_norm.blog": "层归一化除以 σ + ε，和博客的代码一样（PyTorch 除以 √(σ² + ε)）。",
    "seednote.add_norm": "在读其他资料？Peter Lau 的博客文章《The transformer's details》写的是 σ = √(1/d Σ xᵢ)：标准差需要平方，σ = √(1/d Σ "
                         "(xᵢ − μ)²)。上海交通大学的《Transformer 讲稿整理》的式 (13) 减去的是 Σⱼ Xᵢⱼ，一个和：应当减去均值 μ = (1/d) Σⱼ Xᵢⱼ，根号里也是。两"
                         "者都没有写 ε、γ 和 β。",
    "intro.ffn": "同一个小的两层网络分别作用于每个位置：先扩展到 d_ff，经过激活函数，再变回 d_model。",
    "intro.ffn.relu": "激活函数是 ReLU，max(0, x)，和论文一样：负数变成 0。",
    "intro.ffn.gelu": "激活函数是 GELU，x·Φ(x)，BERT 和 GPT 使用它（论文用 ReLU）：一个平滑的 ReLU，让较小的负数缩小后通过。",
    "intro.encoder_stack": "编码器把注意力和前馈网络重复 N 次；每一层的输出是下一层的输入，编码器的输出 enc.out 供解码器的"
                           "每个交叉注意力读取。层和论文中的头 head_1 … head_h 一样从 1 开始编号；步骤名像代码一样从 0 开始"
                           "计数：enc.0 是第 1 层。",
    "intro.encoder_stack.post": "后置归一化时，每一层以层归一化 (ln2) 结束，它就是这一层的输出；enc.out 是最后一层的输出。",
    "intro.encoder_stack.pre": "前置归一化时，每一层以残差相加 (add2) 结束，它没有归一化；enc.out 是对最后一层输出再做的"
                               "一次层归一化，有自己的 γ 和 β。",
    "intro.decoder_input": "解码器读入右移后的目标序列：起始符 SOS，然后是已有的词。它们像源句子一样做词嵌入和位置编码。",
    "seednote.qkv": "在手算博客《The Random Transformer》的例子？它展开 E × WK1 时，在第二行本应是 3.99 的地方写了 4（“(2.84 × 0) + (4 × 1) + …”）；"
                    "它的结果 9.99 和 6.84 用的是 3.99，和本应用一样。",
    "intro.masked_attention": "在解码器的自注意力中，一个位置不能看到后面的位置：因果掩码在对角线上方加上 −∞，"
                              "softmax 之后这些格子的权重为 0。",
    "seednote.masked_attention": "在读上海交通大学的《Transformer 讲稿整理》？它的式 (20) 用编码器的输入 X 计算 K = XW^K 和 V = XW^V（式 (21) 连 Q 也是"
                                 "）。在解码器的自注意力中，Q、K、V 都来自解码器的输入 Y：K = YW^K，V = YW^V。只有在交叉注意力中，键和值才来自编码器（它的式 (28)）。",
    "intro.cross_attention": "交叉注意力，即论文中的编码器-解码器注意力：查询来自解码器，键和值来自编码器的输出，"
                             "所以每个目标位置都能看到整个源句子。",
    "intro.output": "最后的线性层给词汇表中的每个词打分 (logits)，softmax 把分数变成概率分布。最后一个位置上概率最大的词"
                    "就是下一个 token（贪心）。在 softmax 之前，`<unk>` 的 logit 被掩码成 −∞（与解码器的因果掩码相同）："
                    "它代表词汇表里没有的词，而不是一个要写出的词，所以它的概率为 0，在这里和生成时都不会被预测。"
                    "训练的损失函数读取的也是这组加了掩码的 logits。",
    "intro.paper_vs_blog": "博客在一些地方简化了论文，而且它的正文与代码有时不一致。每处差异都列在这里，并给出两种形式；"
                           "标签说明第二种形式是谁的（论文的；层归一化论文没有写出公式，那里是 Ba 等人和 PyTorch 的），"
                           "差异由模型选项决定时，还标出本应用当前采用的形式。",
    "desc.embed": "查出每个 token 在嵌入矩阵中的那一行（公式中有 √d_model 时再乘以它）。",
    "desc.pos": "每个位置一行，加到词嵌入上：它只取决于位置，与 token 无关。",
    "desc.input": "两者之和：第一层的输入。",
    "desc.attn.q": "每个头中每个 token 一行：这个 token 要找什么。",
    "desc.attn.k": "每个头中每个 token 一行：查询与之比较的内容。",
    "desc.attn.v": "每个头中每个 token 一行：注意力权重加权混合的内容。",
    "desc.attn.scores": "每个查询与每个键的点积。",
    "desc.attn.scaled": "分数除以一个数，避免 softmax 饱和。",
    "desc.attn.mask": "一个位置不能看到后面的位置。",
    "desc.attn.masked": "分数加上掩码：后面的位置变成 −∞。",
    "desc.attn.weights": "每一行的 softmax：每行的和为 1。",
    "desc.attn.heads": "每个头按注意力权重对自己的值向量加权求和。",
    "desc.attn.concat": "各个头的结果并排放在一起。",
    "desc.attn.out": "把各个头混合回每个 token 的 d_model 个数。",
    "desc.add": "这一块的输入 X 加上子层的输出。",
    "desc.ln": "每一行（每个 token）变成均值 0、方差约为 1，再乘以 γ、加上 β。",
    "desc.ffn.hidden": "把每一行扩展到 d_ff 维。",
    "desc.ffn.act": "逐个数作用的非线性函数（ReLU 或 GELU）。",
    "desc.ffn.out": "每一行变回 d_model 维。",
    "cross.even": "这里每个权重与 1/{n} 的差都小于 {tolerance}：每个查询的各个分数几乎相等，所以它对所有源词一视同仁，"
                  "输出约为各值向量的平均。（在示例中，编码器前馈网络的输出比它的输入大好几倍，盖过了残差相加，"
                  "所以编码器对 hello 和 world 的输出几乎是同一个向量：可在“编码器层的堆叠”页比较。）",
    "desc.enc.out": "供每个交叉注意力读取：后置归一化时就是最后一层的输出本身，前置归一化时是对它再做的一次层归一化。",
    "desc.dec.out": "后置归一化时就是最后一层的输出本身，前置归一化时是对它再做的一次层归一化。",
    "desc.logits": "每个解码器位置上词汇表中每个词的分数。",
    "desc.vocab_mask": "输出层的掩码：<unk> 为 −∞（它代表词汇表里没有的词，永远不会是下一个 token），其他词为 0。",
    "desc.masked_logits": "logits 加上掩码：<unk> 的分数变成 −∞，所以它的概率正好是 0。",
    "desc.probs": "每个词成为下一个 token 的概率。",
    "step.embed": "词嵌入",
    "step.pos": "位置编码",
    "step.input": "词嵌入 + 位置编码",
    "step.attn.q": "查询 $Q$",
    "step.attn.k": "键 $K$",
    "step.attn.v": "值 $V$",
    "step.attn.scores": "注意力分数",
    "step.attn.scaled": "缩放后的分数",
    "step.attn.mask": "因果掩码",
    "step.attn.masked": "加掩码的分数",
    "step.attn.weights": "注意力权重",
    "step.attn.heads": "各头的输出",
    "step.attn.concat": "拼接",
    "step.attn.out": "输出投影 $W^O$",
    "step.attn.dropout": "注意力权重的 dropout",
    "step.add": "残差连接",
    "step.ln": "层归一化",
    "step.ffn.hidden": "第一个线性层",
    "step.ffn.act": "激活函数",
    "step.ffn.out": "第二个线性层",
    "step.enc.out": "编码器的输出",
    "step.dec.out": "解码器的输出",
    "step.logits": "logits（未归一化分数）",
    "step.vocab_mask": "词汇表掩码",
    "step.masked_logits": "加掩码的 logits",
    "step.probs": "概率分布",
    "step.dropout": "dropout（随机失活）",
    "step.drop": "子层输出的 dropout",
    "param.embed.src": "源语言词嵌入矩阵",
    "param.embed.src.shared": "词嵌入矩阵，源语言与目标语言共用一个",
    "param.embed.src.shared.tied": "词嵌入矩阵，源语言、目标语言与输出层（转置后）共用一个",
    "param.embed.tgt": "目标语言词嵌入矩阵",
    "param.embed.tgt.tied": "目标语言词嵌入矩阵，转置后也是输出层的权重",
    "param.pos.learned": "可学习的位置编码",
    "param.W_Q": "查询权重",
    "param.W_K": "键权重",
    "param.W_V": "值权重",
    "param.W_O": "输出投影",
    "param.b_Q": "查询偏置",
    "param.b_K": "键偏置",
    "param.b_V": "值偏置",
    "param.b_O": "输出偏置",
    "param.W_1": "第一个线性层的权重",
    "param.W_2": "第二个线性层的权重",
    "param.b_1": "第一个线性层的偏置",
    "param.b_2": "第二个线性层的偏置",
    "param.gamma": "层归一化的缩放参数",
    "param.beta": "层归一化的平移参数",
    "param.unembed.W": "输出层的权重",
    "param.unembed.b": "输出层的偏置",
    "overview.flow": "数据现在在哪里",
    "overview.src": "源 token",
    "overview.tgt": "解码器输入",
    "overview.next": "下一个 token（贪心）",
    "overview.prob": "概率",
    "overview.steps": "数据自下而上流动：从底部的句子到顶部的下一个 token；编码器的输出进入解码器的交叉注意力。点击一个方框，"
                      "打开它那一步的页面；每个步骤页面的末尾都有指向上一步和下一步的链接。每一页都跟踪同一组数字。",
    "nav.previous": "上一步：{page}",
    "nav.next": "下一步：{page}",
    "overview.shapes": "{n_src} 个源 token，{n_tgt} 个解码器位置，d_model = {d_model}，{h} 个头，N = {n_layers} 层",
    "tokens.table": "Token",
    "tokens.token": "token",
    "tokens.id": "id",
    "tokens.known": "在词汇表中",
    "tokens.yes": "是",
    "tokens.no": "否：新词，权重由随机种子决定",
    "output.top": "最可能的 {k} 个下一个 token（共 {n} 个）",
    "output.position": "解码器位置",
    "compare.post": "博客",
    "compare.side.paper": "论文",
    "compare.side.pytorch": "Ba 等人与 PyTorch（论文没有写出公式）",
    "compare.side.code": "博客的代码，博客的数值由它算出（本应用的 Hello World）",
    "compare.side.exact": "计算所得，未经手抄",
    "compare.side.app": "本应用",
    "compare.side.stable": "稳定的形式（两个预设都用它）",
    "compare.now": "本应用当前的做法",
    "compare.pe": "“World”（位置 1）的位置编码",
    "compare.weights": "第 1 个头的注意力权重：除以 √3（论文）或除以 30（博客）",
    "compare.ln": "$E + Z$ 第一行的层归一化：博客代码的形式与 PyTorch 的形式",
    "compare.divisor_sqrt": "÷ √3",
    "compare.divisor_30": "÷ 30",
    "compare.form_blog": "(x − μ)/(σ + ε)，ε = 10⁻⁶",
    "compare.form_paper": "(x − μ)/√(σ² + ε)，ε = 10⁻⁵（PyTorch 的 nn.LayerNorm）",
    # 生成页
    "section.generate": "生成与训练",
    "page.generate": "生成（自回归解码）",
    "intro.generate": "推理时，解码器一次写出一个 token：从起始符 SOS 开始，从最后一行的概率中选出下一个 token，把它接到"
                      "输入后面再运行一次，直到写出结束符 EOS。编码器只需运行一次，因为它的输出与解码器写出的内容无关；"
                      "解码器每写一个新 token 就要在整个前缀上运行一次，一步接一步，所以解码比编码慢。（下面每一步本应用都"
                      "运行完整的前向计算，包括编码器，以便在每一页上打开任何一步；编码器每次算出的数值都相同。）"
                      "每次都取概率最大的 token（贪心）可能错过整体概率更大的句子；采样带来多样性，束搜索同时保留几个句子（第二个标签页有一个例子）。",
    "gen.model": "模型",
    "gen.m.trained": "在语料上训练过的",
    "gen.m.current": "各页面的模型",
    "gen.m.trained_note": "一个学会了随应用提供的英语 → 西班牙语语料（{n} 个句对）的模型：{sizes}"
                          "由 `python -m engine train --corpus en-es --out {file}` 从种子 0 训练得到（文件随应用提供）。"
                          "它不使用侧边栏的预设、选项和修改过的权重；它没学过的词会得到"
                          "由随机种子决定的自己的权重。",
    "gen.m.current_note": "其他各页显示的模型，即侧边栏所描述的模型。{model}",
    "gen.m.untrained": "随机权重什么也没学过：生成的句子是随机的。",
    "gen.strategy": "解码策略",
    "gen.s.greedy": "贪心",
    "gen.s.temperature": "温度采样",
    "gen.s.top_k": "top-k",
    "gen.s.top_p": "top-p（核采样）",
    "gen.s.beam": "束搜索",
    "gen.temperature": "温度 T",
    "gen.k": "k（保留概率最大的 k 个）",
    "gen.p": "p（按概率从大到小保留，直到累计达到 p）",
    "gen.width": "束宽",
    "gen.alpha": "长度归一化 α",
    "gen.max_len": "最多生成的 token 数",
    "gen.seed": "采样随机种子",
    "gen.failed": "无法选出 token：{error}",
    "gen.sentence": "生成结果：",
    "gen.finished": "模型在第 {n} 步写出了 EOS。",
    "gen.stopped": "达到 {n} 个 token 的上限，模型还没有写出 EOS。",
    "gen.prev": "◀ 上一步",
    "gen.next": "下一步 ▶",
    "gen.play": "▶ 播放",
    "gen.pause": "⏸ 暂停",
    "gen.step_label": "步骤",
    "gen.prefix": "**这一步的解码器输入**（{n} 个 token，SOS 在前）：",
    "gen.chosen": "**选出的下一个 token**：`{token}` —— 模型给它的概率 {p}，它在采样所用分布中的概率 {q}。",
    "gen.mask": "带掩码的自注意力权重（第 1 层，第 1 个头）：掩码随输入变大",
    "gen.probs": "模型给出的下一个 token 的概率（P 的最后一行）：{n} 个中最可能的 {k} 个",
    "gen.sampled": "实际采样所用的概率分布（经过温度 / top-k / top-p 之后）：{n} 个中最可能的 {k} 个",
    "gen.open_step": "在所有页面上显示这一步的前向计算",
    "gen.score": "得分",
    "gen.beam_best": "**最佳句子**：{text} —— log P = {logp}，得分 = {score}",
    "gen.beam_legend": "每个方框是一个前缀及其对数概率；句子结束处还标出长度归一化后的得分；p 是模型给它最后一个 "
                       "token 的概率。灰色：这一步被剪枝的前缀（不在得分最高的 k 个之中，k 为束宽），鼠标悬停可看全部；"
                       "粗边框：以 EOS 结束；红色：最佳句子的路径。",
    "gen.pruned": "剪枝 {n} 个",
    "gen.pruned_best": "最好：{token} {logp}",
    "gen.col.rank": "名次",
    "gen.col.text": "句子",
    "gen.col.length": "长度",
    "gen.col.finished": "以 EOS 结束",
    "gen.compare": "贪心与束搜索：一个结果不同的例子",
    "gen.tab.run": "解码当前句子",
    "gen.tab.compare": "贪心与束搜索",
    "gen.compare_setup": "一个论文结构的小模型（d_model 16，2 个头，1 层，随机权重）翻译“{src}”，束宽 {width}。",
    "gen.compare_why": "贪心每一步都取概率最大的 token：{greedy}，log P = {lg}。束搜索同时保留了概率第二的第一个词，"
                       "找到 {beam}，log P = {lb}。整句的概率是各个 token 概率的乘积，而权重是随机的，每个概率都很小："
                       "束搜索的句子第一个词的概率略低，但少一个 token，所以乘积（以及 log P）更大。",
    "gen.compare_open": "在应用中打开这个例子",
    # 训练页
    "page.train": "训练",
    "intro.train": "模型用**教师强制**学习：解码器读入右移后的正确目标（SOS 在前），每个位置都用下一个正确 token 的"
                   "交叉熵打分。反向传播给出每个权重的梯度，优化器（默认为 Adam，采用论文的预热学习率）沿梯度的反方向把权重"
                   "移动一点。在第二个标签页用我们的语料训练小模型：训练好的权重随后成为所有页面的起点。",
    "train.loss": "当前句子对的损失",
    "train.loss_intro": "侧栏中的源句子和目标作为一个训练样本（这里目标前缀就是完整的目标句子）。",
    "train.label_smoothing": "标签平滑 ε",
    "train.col.position": "i",
    "train.col.input": "解码器输入",
    "train.col.target": "目标 y_i",
    "train.col.p_target": "P(y_i)",
    "train.col.loss": "损失 ℓ_i",
    "train.mean_loss": "平均损失 L",
    "train.backward": "反向传播：每一步和每个权重的梯度",
    "train.backward_intro": "从 logits 开始反向进行，每一步按自己的规则把损失的梯度传给它的输入；权重的梯度就是优化器使用的量。",
    "train.grad_step": "某一步的梯度",
    "train.grad_param": "某个权重的梯度",
    "train.corpus_title": "用语料训练",
    "train.corpus_intro": "一个论文结构的小模型（d_model {d_model}，{n_heads} 个头，d_ff {d_ff}，{n_layers} 层，随机初始化）"
                          "学习为本应用编写的一个很小的平行语料。点击“停止”会保留已经学到的权重。",
    "train.corpus": "语料",
    "train.corpus.en-es": "英语 → 西班牙语",
    "train.corpus.en-zh": "英语 → 中文",
    "train.pairs": "{n} 个句子对",
    "train.col.src": "源句子",
    "train.col.tgt": "目标",
    "train.col.before": "训练前",
    "train.col.after": "训练后",
    "train.optimizer": "优化器",
    "train.steps": "步数",
    "train.batch_size": "每步的句子对数",
    "train.warmup": "预热步数",
    "train.lr_scale": "学习率缩放 s",
    "train.dropout": "Dropout（随机失活）P_drop",
    "train.seed": "随机种子",
    "train.step": "步",
    "train.lr": "学习率 η",
    "train.loss_axis": "损失（对数坐标）",
    "train.start": "开始训练",
    "train.stop": "停止",
    "train.stop_help": "停止训练；保留目前学到的权重。",
    "train.progress": "第 {step} / {steps} 步：损失 {loss}",
    "train.done": "训练了 {steps} 步，最后的损失 {loss}。现在所有页面都使用这些权重。",
    "train.done_stopped": "在第 {steps} 步停止，最后的损失 {loss}。现在所有页面都使用这些权重。",
    "train.diverged": "训练停止：{error}",
    "train.replayed": "本服务器已经用同样的设置训练过，所以直接显示结果。",
    "train.exact": "贪心解码准确复现了 **{n} 个训练目标中的 {exact} 个**。",
    "train.attention": "最后一个解码器层（第 1 个头）的交叉注意力，“{src}” → “{tgt}”：",
    "train.files": "保存和载入权重",
    "train.tab.loss": "损失与梯度",
    "train.files_intro": "把当前的权重下载为 .npz 文件，或者载入本应用（或 `python -m engine train --out`）保存的文件："
                         "它会成为所有页面的起点。",
    "train.download": "下载权重（.npz）",
    "train.upload": "载入权重（.npz）",
    "train.upload_bad": "无法载入 {name}：{error}",
    "stack.changes": "每一层改变了什么",
    "stack.measure": "度量",
    "stack.change": "改变量",
    "stack.cosine": "方向的保持（余弦）",
    "stack.norm": "长度",
    "stack.change_note": "第 l 层把每个位置的向量移动了多远：它的输出减去输入（$x^{(l)} - x^{(l-1)}$）的长度。"
                         "这一层几乎原样放过一个 token 时小，改写它时大。",
    "stack.cosine_note": "每个位置的向量在第 l 层之后与之前的余弦：1 表示这一层保持了它的方向，0 表示把它转了直角，"
                         "−1 表示把它反了过来。NaN：全为 0 的向量没有方向。",
    "stack.norm_note": "每个位置的向量的长度：先是堆叠的输入，然后是每一层的输出。",
    "stack.layer": "第 {l} 层",
    "stack.one_layer": "单独看一层",
    "stack.focus": "{sublayer}：每个位置最关注哪里",
    "stack.focus_note": "每个头中，每个位置注意力权重最大的 token，以及这个权重。如果平均分给 {k} 个 token，"
                        "每个权重都是 {even}。",
    "stack.focus_note_masked": "每个头中，每个位置注意力权重最大的 token，以及这个权重。掩码让位置 i（从 0 开始）"
                               "只能看到前 i + 1 个 token：平均分配时，每个权重都是 1/(i + 1)。",
    "stack.layer_output": "第 {l} 层的输出",
    "stack.last_output": "第 {l} 层的输出：整个堆叠的输出",
    "stack.same": "{out} 就是第 {l} 层的输出 {name}：同一组数，只画一次。",
    "stack.final_norm": "整个堆叠的输出",
    "stack.final_norm_note": "前置归一化：{out} 是对第 {l} 层的输出（{name}）再做一次层归一化，有自己的 γ 和 β。",
    # 解码器各页、dropout、完整的注意力公式
    "page.dec_add_norm": "残差连接与层归一化",
    "page.dec_ffn": "前馈网络",
    "page.decoder_stack": "解码器层的堆叠",
    "page.dropout": "Dropout（随机失活，训练时）",
    "intro.dec_add_norm": "解码器的三个子层（带掩码的自注意力、交叉注意力、前馈网络）都像编码器的子层一样包在残差连接与"
                          "层归一化里：后置归一化（论文）先把子层的输入加到它的输出上，再对每一行做层归一化；前置归一化"
                          "先对输入做层归一化，再把子层的输出加到未归一化的输入上。",
    "intro.dec_ffn": "解码器的第三个子层是和编码器同样的基于位置的前馈网络，但有自己的权重：先扩展到 d_ff，经过激活函数，"
                     "再变回 d_model。",
    "intro.decoder_stack": "解码器把三个子层重复 N 次；每一层的交叉注意力读取的都是同一个编码器输出。最后一层的输出"
                           "（前置归一化时再经过一次最终的层归一化）送到输出层。",
    "intro.dropout": "训练时，dropout（随机失活）把某些步骤的每个格子以概率 P_drop 置为 0，其余的除以 1 − P_drop，"
                     "使每个格子的期望值不变。论文（第 5.4 节）把它用在词嵌入与位置编码之和上，以及每个子层的输出上"
                     "（在残差相加之前）；和 Annotated Transformer 与 PyTorch 一样，本模型也把它用在注意力权重上。"
                     "其他页面展示的是推理时的模型，没有 dropout；这里同一个模型以训练模式运行一次，随机种子决定哪些"
                     "格子被丢弃。每个 dropout 步骤都紧跟在它作用的那一步之后。",
    "sublayer.self_attn": "自注意力",
    "sublayer.masked": "带掩码的自注意力",
    "sublayer.cross": "交叉注意力",
    "sublayer.ffn": "前馈网络",
    "depart.badge": "与论文不同",
    "depart.attn_divisor": "这个模型把注意力分数除以 {divisor}；论文除以 √d_k（这里是 √{d_k}）。博客除以 30，是因为除以 √3 "
                           "时它的权重饱和为 0 和 1。",
    "depart.attn_divisor.button": "像论文一样除以 √d_k",
    "depart.pos_encoding.blog_table": "这是博客列出的表，经过手工舍入（cos(0.01) = 0.99995 写成 0.99），保留它是为了与博客给出的"
                                      "数值一致；论文的正弦位置编码让第 2i 列和第 2i + 1 列共用指数 2i/d_model，并且不舍入。",
    "depart.pos_encoding.blog": "这是博客的公式，每一列 j 有自己的指数 2j/d_model；论文的正弦位置编码让第 2i 列和第 2i + 1 列"
                                "共用指数 2i/d_model。",
    "depart.pos_encoding.learned": "这是一张可学习的表；论文加的是正弦位置编码（论文发现可学习的位置编码效果几乎相同）。",
    "depart.pos_encoding.none": "这里没有位置编码；论文加上正弦位置编码。",
    "depart.pos_encoding.button": "使用论文的正弦位置编码",
    "depart.embed_scale": "这里嵌入没有乘以 √d_model，和博客一样；论文乘以它（第 3.4 节）。",
    "depart.embed_scale.button": "像论文一样乘以 √d_model",
    "depart.shared_embeddings": "这里源和目标各有一个嵌入表；论文共用一个（第 3.4 节）。",
    "depart.shared_embeddings.button": "像论文一样共用一个嵌入表",
    "depart.d_k": "每个头的宽度是 d_k = {d_k}（d_v = {d_v}），而 d_model = {d_model}、h = {h}；论文取 "
                  "d_k = d_v = d_model / h，使 h 个头合起来正好是 d_model 宽。（博客的例子是 d_k = 3、d_model = 4、h = 2。）",
    "depart.d_k.button": "使用 d_k = d_v = d_model / h = {width}",
    "depart.attn_bias": "这里的投影加上了偏置 b^Q、b^K、b^V、b^O，和 PyTorch 的 nn.MultiheadAttention 一样；论文的公式中"
                        "没有偏置。",
    "depart.attn_bias.button": "像论文的公式一样去掉偏置",
    "depart.norm_placement": "这是前置归一化 (Pre-Norm)：x + Sublayer(LayerNorm(x))，和 Annotated Transformer 一样；"
                             "论文在残差连接之后归一化：LayerNorm(x + Sublayer(x))。",
    "depart.norm_placement.button": "像论文一样使用后置归一化 (Post-Norm)",
    "depart.layer_norm": "这里的层归一化除以 σ + ε，和博客的代码一样。论文没有写出层归一化的公式：它引用了 Ba 等人 (2016)，"
                         "他们的形式 (x − μ)/√(σ² + ε) 也是 PyTorch 的 nn.LayerNorm 所用的。",
    "depart.layer_norm.button": "除以 √(σ² + ε)（Ba 等人，PyTorch）",
    "depart.activation": "这里的前馈网络用 GELU，和 BERT、GPT 一样；论文用 ReLU，max(0, x)。",
    "depart.activation.button": "像论文一样使用 ReLU",
    "depart.ffn_bias": "这里的前馈网络没有偏置；论文的 FFN(x) = max(0, xW₁ + b₁)W₂ + b₂ 有 b₁ 和 b₂。",
    "depart.ffn_bias.button": "像论文一样加上偏置",
    "depart.tied_output": "这里的输出层有自己的矩阵，和博客一样；论文复用嵌入矩阵的转置（第 3.4 节）。",
    "depart.tied_output.button": "像论文一样复用嵌入矩阵",
    "depart.no_paper_value": "这里 d_model 不能被 h 整除，没有哪个 d_k 能得到论文的形式：请选择能整除的规模。",
    "depart.drops_weights": "训练或载入的权重只适用于它们自己的设置：点这个按钮会回到预设由随机种子生成的随机权重。",
    "formulas.side_by_side": "{h} 个头的 $W_i^Q$ 是同一个矩阵的切片：并排放在一起就是 $W^Q$，大小为 {d_model} × {width}"
                             "（d_model × h·d_k；论文取 d_k = d_model/h，所以是 d_model × d_model）。前向计算用 X 乘以"
                             "整个矩阵一次，再把乘积按头切开；第 {head} 个头的 {d_k} 列已标出。$W^K$ 和 $W^V$ 也是这样"
                             "切分的。",
    "formulas.first_rows": "它的前 {rows} 行（共 {d_model} 行；整个矩阵太大，不宜在每次修改时都发送给浏览器）：",
    "derive.qkv": "用 sympy 推导：逐个元素写出 $Q = X W^Q$",
    "derive.qkv.text": "sympy 写出第 {head} 个头的查询的前几行和前几列：每个元素是 X（`{x}`）的一行乘以 $W^Q_{head}$ "
                       "的一列，模型有偏置时再加上偏置。然后代入当前的数值（已舍入）并求和：结果就是上面 Q 的数值。",
    "derive.qkv.wide": "这里 Q 的每个元素是 d_model = {d_model} 个乘积之和；sympy 只在 d_model 不超过 {most} 时"
                       "把求和逐项写出（例如博客的 Hello World）。",
    "derive.softmax": "用 sympy 推导：softmax 的雅可比矩阵",
    "derive.softmax.text": "一行中每个权重 $s_i$ 如何随每个分数 $z_j$ 变化：sympy 对一行 3 个分数求导（商法则），"
                           "再用权重本身写出结果。反向传播把每一行的梯度乘以它（最后一行）。",
    "derive.layer_norm": "用 sympy 推导：层归一化的梯度",
    "derive.layer_norm.paper.text": "一行中每个归一化后的 $\\hat x_k$ 如何随每个输入 $x_i$ 变化（每行 d 个数）："
                                    "$x_i$ 在 $i = k$ 时直接改变 $x_k$，还会改变均值 μ 和方差 σ²。sympy 沿这三条路径"
                                    "用链式法则求导，并用 x̂ 写出结果。乘以 x̂ 的梯度 ȳ ⊙ γ 并对 k 求和，就是反向"
                                    "传播的规则（训练页）。",
    "derive.layer_norm.blog.text": "一行中每个归一化后的 $\\hat x_k$ 如何随每个输入 $x_i$ 变化（每行 d 个数），这里"
                                   "是博客的形式，除以 σ + ε：$x_i$ 在 $i = k$ 时直接改变 $x_k$，还会改变均值 μ 和"
                                   "方差 σ²。sympy 沿这三条路径用链式法则求导，并用 x̂ 写出结果。乘以 x̂ 的梯度 "
                                   "ȳ ⊙ γ 并对 k 求和，就是反向传播的规则（训练页）。",
    "derive.cross_entropy": "用 sympy 推导：softmax 之后交叉熵的梯度",
    "derive.cross_entropy.text": "sympy 对一个位置的损失求导：3 个 logits z，目标分布 q 的和为 1（不做标签平滑时是"
                                 " one-hot）。记 p = softmax(z)，梯度是 p − q；目标是 one-hot 时就是 p − onehot(y)。"
                                 "对各位置取平均时再除以 |I|。",
    "derive.pe_rotation": "用 sympy 推导：PE(pos + k) 是 PE(pos) 的旋转",
    "derive.pe_rotation.text": "论文的位置编码在每一对列 (2i, 2i + 1) 中放同一个频率的正弦和余弦：ω·pos，其中 "
                               "ω = 1/10000^(2i/d_model)。sympy 用和角公式把 pos + k 处的一对数"
                               "写成矩阵 R(k) 乘以 pos 处的一对数。R(k) 只取决于 k 和 ω，与 pos 无关，而且是旋转"
                               "（RᵀR = I）：平移 k 在每个位置上都是同一个线性变换。",
    "derive.pe_rotation.numbers": "代入当前的数值，取第一对列（ω = 1）：PE 的第 1 行等于 R(1) 乘以第 0 行。",
    "derive.pe_rotation.other": "这一性质属于论文的正弦位置编码。模型现在用的是另一种（侧栏），它的每对列不是同一个"
                                "频率的正弦和余弦。",
    "dropout.place": "位置",
    "dropout.place.src": "源句子的输入",
    "dropout.place.tgt": "解码器输入",
    "dropout.place.enc": "编码器层",
    "dropout.place.dec": "解码器层",
    "dropout.which": "哪一处 dropout",
    "dropout.weights": "{sublayer}：权重",
    "dropout.output": "{sublayer}：输出",
    "desc.dropout": "仅在训练时：词嵌入与位置编码之和中随机一些格子变成 0，其余除以 1 − P_drop。",
    "desc.attn.dropout": "仅在训练时：随机一些权重变成 0，其余除以 1 − P_drop。",
    "desc.drop": "仅在训练时，残差相加之前：子层输出中随机一些格子变成 0，其余除以 1 − P_drop。",
}

CATALOGS = {"en": EN, "zh": ZH}


def language_of(locale: str | None) -> str:
    """The app's language for a browser locale such as "zh-CN" or "en-US"."""
    return "zh" if (locale or "").lower().startswith("zh") else "en"


# The words the engine writes inside its formulas (\text{...}), in the other languages; the math stays as it is.
MATH_WORDS = {"zh": {
    "is not passed on: the encoding is fixed, not learned": "不再往回传：位置编码是固定的，不用学习",
    "is a constant: its gradient reaches no parameter": "是常数：它的梯度不会传到任何参数",
    "(each row)": "（逐行）",
    "columns ": "第 ",
    " of ": " 列，取自 ",
    "the post's printed value": "博客给出的数值",
    "otherwise": "其余",
    "its formula: ": "按公式：",
    ": a later position": "：后面的位置",
    "kept": "保留",
    "dropped; it was ": "被丢弃；原值为 ",
    "decoder input": "解码器输入",
    "ignore": "忽略",
    " even": " 为偶数",
    " odd": " 为奇数",
    "(the post's printed table)": "（博客列出的表）",
    "(a learned table)": "（学习得到的表）",
    "normalized": "归一化值",  # the post's name for LayerNorm's output (engine.blog.DIFFERENCES)
}}


# The words of the engine's plain-text arithmetic (Explanation.text), as (pattern, replacement) pairs.
PLAIN_WORDS = {"zh": [
    (r"^With (.*?): ", r"其中 \1："),
    (r", (?=σ|√\(σ)", "，"),  # LayerNorm's σ², σ and denominator
    (r" and x̂ = ", "，x̂ = "),
    (r"\(no positional encoding\)", "（没有位置编码）"),
    (r"\(learned\)", "（学习得到）"),
    (r"the post's printed value \(its formula: (.*)\) = ", r"博客给出的数值（按公式：\1） = "),
    (r", 2 decimals\)", "，保留 2 位小数)"),
    (r"\(position (\d+) comes after (\d+)\)", r"（位置 \1 在 \2 之后）"),
    (r"\(position (\d+) is not after (\d+)\)", r"（位置 \1 不在 \2 之后）"),
    (r"\(kept\)", "（保留）"),
    (r"\(dropped; it was (.*?)\)", r"（被丢弃；原值为 \1）"),
]}


def translator(lang: str):
    catalog = CATALOGS.get(lang, EN)

    def t(key: str, **values) -> str:
        text = catalog.get(key, EN[key])
        return text.format(**values) if values else text

    t.lang = lang if lang in CATALOGS else "en"
    t.math = functools.partial(math_words, lang)  # t.math(latex): a formula with its words in the language
    t.plain = functools.partial(plain_words, lang)  # t.plain(text): the plain-text arithmetic, likewise
    return t


UNICODE_MATH = {"W^O": "Wᴼ"}  # the math of the titles, in Unicode where only plain text shows (navigation, plotly)


def plain_math(text: str) -> str:
    """A text with its $…$ math in Unicode (or unwrapped), for labels that cannot render LaTeX."""
    return re.sub(r"\$([^$]+)\$", lambda match: UNICODE_MATH.get(match[1], match[1]), text)


def math_words(lang: str, latex: str) -> str:
    r"""The engine's formula with the words inside its \text{} in the language."""
    for english, words in MATH_WORDS.get(lang, {}).items():
        latex = latex.replace(f"\\text{{{english}}}", f"\\text{{{words}}}")
    return latex


def plain_words(lang: str, text: str) -> str:
    """The engine's plain-text arithmetic with its words in the language."""
    for pattern, replacement in PLAIN_WORDS.get(lang, []):
        text = re.sub(pattern, replacement, text)
    return text


# The blog-vs-paper differences: English from the engine's record, Chinese here.
EN.update({f"diff.{d['key']}.topic": d["topic"] for d in DIFFERENCES})
EN.update({f"diff.{d['key']}.why": d["why"] for d in DIFFERENCES})
ZH.update({
    "diff.wq1.topic": "第 1 个头的 $W^Q$",
    "diff.wq1.why": "博客正文中的 LaTeX 与代码不一致；数值是代码算出来的：$Q_1$ = [[8, 3, 3], [9.99, 3.99, 4]] 需要代码里的矩阵。",
    "diff.wk2.topic": "第 2 个头的 $W^K$",
    "diff.wk2.why": "第 2 个头的数值同样来自代码中的矩阵。",
    "diff.pe_formula.topic": "位置编码的指数",
    "diff.pe_formula.why": "对 World，论文给出 [0.841, 0.540, 0.0100, 0.99995]，博客给出 [0.84, 0.99, 0, 1]。Hello World 预设沿用博客的表"
                           "；`pos_encoding='sinusoidal'` 是论文的公式。",
    "diff.pe_rounding.topic": "博客给出的位置编码",
    "diff.pe_rounding.why": "博客把 0.99995 截断为 0.99，之后一直使用 2.84、3.99；`pos_encoding='blog'` 精确计算博客的公式，`'blog_table'` 使用它"
                            "给出的数值。",
    "diff.divisor.topic": "注意力缩放除数",
    "diff.divisor.why": "除以 √3 时权重饱和为 [4.68 × 10⁻¹⁰, 1]；博客临时改为除以 30，才得到它的 $Z$。",
    "diff.layer_norm.topic": "层归一化的形式",
    "diff.layer_norm.why": "博客正文除以 √(σ² + ε)，这是 Ba 等人的形式，PyTorch 的 nn.LayerNorm 也用它（论文引用了层归一化，但没有写出公式）；算出数值的代码把 ε 加在标"
                           "准差 σ 上。",
    "diff.ln_rounding.topic": "博客给出的层归一化结果",
    "diff.ln_rounding.why": "正文把 1.7188 截断为 1.718。",
    "diff.z_digits.topic": "正文中的 $Z$",
    "diff.z_digits.why": "正文重新抄写 $Z$ 时最后几位不同；由 $W^O$ 算出的是代码的输出。",
    "diff.embed_scale.topic": "嵌入的缩放",
    "diff.embed_scale.why": "论文把嵌入乘以 √d_model；博客没有。",
    "diff.mask.topic": "因果掩码",
    "diff.mask.why": "博客跳过了掩码（它写道“这里先跳过”）。只有一个 SOS 时掩码不起作用；目标更长时它遮住未来的位置。",
    "diff.softmax.topic": "softmax",
    "diff.softmax.why": "分数超过约 709 时博客的写法会溢出为 NaN（它没有层归一化的 6 层堆叠就是如此）；`softmax='naive'` 可以复现。",
    "diff.w_o_random.topic": "更深层的 $W^O$",
    "diff.w_o_random.why": "博客每次调用都重新随机生成 $W^O$；参数必须固定，数值才能复现、才能修改。",
    "diff.generate.topic": "生成时的解码器输入",
    "diff.generate.why": "博客的 generate 循环只输入最后一个 token，没有位置编码和掩码；论文的解码器会关注之前输出的每一个 token。",
})
