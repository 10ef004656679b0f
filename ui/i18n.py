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
    "ctl.preset": "Preset",
    "ctl.src": "Source sentence",
    "ctl.tgt": "Target prefix (the decoder reads SOS + this)",
    "ctl.options": "Model options",
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
    "ctl.weights": "Trained or loaded weights ({id}) are in use: every page starts from them.",
    "ctl.drop_weights": "Back to the preset's random weights",
    "ctl.edits": "Some weights are edited: every page uses them.",
    "ctl.layer": "Layer",
    "ctl.share": "Share this exact example: copy the page address (it holds every setting and edit).",
    "choice.paper": "paper",
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
    "preset.hello-world": "Hello World (blog, 4-d)",
    "preset.paper": "Paper (512-d)",
    # messages
    "msg.kept": "{error} — the previous settings are kept.",
    "msg.url": "Part of the link was ignored: {detail}",
    "msg.unknown": "Not in the vocabulary, read as <unk>: {words}",
    "msg.nonfinite": "Some numbers are not finite (∞ or NaN), first at step {step}.",
    "msg.edit_bad": "{param}[{index}]: {value!r} is not a finite number between −1,000,000 and 1,000,000; the old value is kept.",
    "msg.edits_dropped": "{n} edit(s) no longer fit the model's sizes and were dropped.",
    "msg.too_big": "{field} is limited to {high} in the app (asked for {value}), so pages stay fast.",
    "msg.too_long": "The {side} has {n} tokens; the app shows at most {high}.",
    "msg.text_cut": "The {side} has {n} characters; only its first {high} are kept.",
    "msg.empty": "The source sentence is empty: type at least one word.",
    "msg.weights_gone": "The trained weights of this link ({id}) are no longer on this server; the preset's "
                        "random weights are used.",
    "msg.not_divisible": "d_model ({d_model}) is not divisible by n_heads ({n_heads}): choose sizes that divide, "
                         "or set d_k and d_v yourself",
    "side.src": "source sentence",
    "side.tgt": "target prefix",
    # step view
    "view.shape": "Shape",
    "view.drill": "How was this cell computed?",
    "view.drill_hint": "Click a cell of the heatmap, or pick it here.",
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
    "page.multihead": "Concat & W^O",
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
    "intro.positional": "Attention itself ignores word order, so a positional encoding, one vector per position, "
                        "is added to the embeddings. The paper uses sines and cosines of different frequencies.",
    "intro.qkv": "Each head multiplies the input by its own three matrices: queries (what a token looks for), "
                 "keys (what it offers) and values (what it passes on).",
    "intro.attention": "Every query is compared with every key (a dot product), divided so the numbers stay "
                       "moderate, and turned into weights that sum to 1 by softmax. Each head's output is the "
                       "weighted sum of its values.",
    "intro.multihead": "The heads' outputs are put side by side and multiplied by W^O, which mixes them back to "
                       "d_model numbers per token.",
    "intro.add_norm": "The sub-layer's input is added to its output (a residual connection), then each row is "
                      "normalised to mean 0 and variance 1 and scaled by γ and shifted by β.",
    "intro.ffn": "The same small two-layer network is applied to every position separately: widen to d_ff, "
                 "apply ReLU, narrow back to d_model.",
    "intro.encoder_stack": "The encoder repeats attention and feed-forward N times; each layer's output is the "
                           "next layer's input. The last one is what the decoder's cross-attention reads.",
    "intro.decoder_input": "The decoder reads the target shifted right: a start token SOS, then the words so far. "
                           "They are embedded and positionally encoded like the source.",
    "intro.masked_attention": "In the decoder's self-attention a position may not look at later positions: the "
                              "causal mask adds −∞ above the diagonal, so softmax gives those cells weight 0.",
    "intro.cross_attention": "Here the queries come from the decoder and the keys and values from the encoder's "
                             "output: each target position looks at the whole source sentence.",
    "intro.output": "A final linear layer scores every word of the vocabulary, and softmax turns the scores into "
                    "probabilities. The most likely word at the last position is the next token (greedy).",
    "intro.paper_vs_blog": "The blog post simplifies the paper in places, and its printed text and its code "
                           "sometimes disagree. The app follows the code; each difference is listed here with the "
                           "numbers both ways.",
    # one line per step, keyed by ui.labels.description_key
    "desc.embed": "Look up each token's row of the embedding table.",
    "desc.pos": "The positional encoding of each position.",
    "desc.input": "Embedding plus positional encoding: the input of the first layer.",
    "desc.attn.q": "Each head's queries.",
    "desc.attn.k": "Each head's keys.",
    "desc.attn.v": "Each head's values.",
    "desc.attn.scores": "Dot product of every query with every key.",
    "desc.attn.scaled": "The scores divided so softmax does not saturate.",
    "desc.attn.mask": "The causal mask: a position may not look at later positions.",
    "desc.attn.masked": "Scores plus mask: later positions become −∞.",
    "desc.attn.weights": "Softmax of each row: the attention weights, which sum to 1.",
    "desc.attn.heads": "Each head's output: the weighted sum of its values.",
    "desc.attn.concat": "The heads' outputs side by side.",
    "desc.attn.out": "The heads mixed back to d_model numbers by W^O.",
    "desc.add": "Residual connection: the sub-layer's input plus its output.",
    "desc.ln": "Layer normalisation of each row (each token).",
    "desc.ffn.hidden": "First linear layer: widen to d_ff.",
    "desc.ffn.act": "The non-linearity (ReLU or GELU).",
    "desc.ffn.out": "Second linear layer: back to d_model.",
    "desc.enc.out": "The encoder's output, read by every cross-attention.",
    "desc.dec.out": "The decoder's output.",
    "desc.logits": "A score for every vocabulary word at every decoder position.",
    "desc.probs": "Probability of each word being the next token.",
    # overview
    "overview.flow": "Where the data is now",
    "overview.src": "Source tokens",
    "overview.tgt": "Decoder input",
    "overview.next": "Next token (greedy)",
    "overview.prob": "probability",
    "overview.steps": "Every step",
    "overview.shapes": "{n_src} source tokens, {n_tgt} decoder positions, d_model = {d_model}, {h} heads, "
                       "N = {n_layers} layer(s)",
    # tokens page
    "tokens.table": "Tokens",
    "tokens.token": "token",
    "tokens.id": "id",
    "tokens.known": "in vocabulary",
    "tokens.yes": "yes",
    "tokens.no": "no → <unk>",
    # output page
    "output.top": "Most likely next tokens",
    "output.position": "Decoder position",
    # compare page
    "compare.post": "The blog",
    "compare.engine": "The app / the paper",
    "compare.pe": "Positional encoding of “World” (position 1)",
    "compare.weights": "Head 1 attention weights: divide by √3 (paper) or by 30 (blog)",
    "compare.ln": "LayerNorm of the first row of E + Z: the blog's form vs the paper's",
    "compare.divisor_sqrt": "÷ √3",
    "compare.divisor_30": "÷ 30",
    "compare.form_blog": "(x − μ)/(σ + ε), ε = 1e−6",
    "compare.form_paper": "(x − μ)/√(σ² + ε), ε = 1e−5",
    # generation page
    "section.generate": "Generate & train",
    "page.generate": "Generation (decoding)",
    "intro.generate": "At test time the decoder writes the translation one token at a time: it starts from SOS, "
                      "runs the whole model, picks a next token from the last row's probabilities, appends it to "
                      "its input and runs again, until it writes EOS. Each step below is a complete forward pass. "
                      "Always taking the most likely token (greedy) can miss a sentence that is more likely as a "
                      "whole; sampling adds variety, beam search keeps several sentences going at once (the second tab "
                      "shows an example).",
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
    "gen.probs": "The model's next-token probabilities (the last row of P)",
    "gen.sampled": "The distribution the token was drawn from (after temperature / top-k / top-p)",
    "gen.open_step": "Show this step's forward pass on every page",
    "gen.score": "score",
    "gen.beam_best": "**Best sentence:** {text} — log P = {logp}, score = {score}",
    "gen.beam_legend": "Each box is a prefix with its log probability; where a sentence ends, also its "
                       "length-normalised score. Edges carry the model's probability of the token. Dashed grey: "
                       "pruned (not among the width best); double border: finished with EOS; red: the best "
                       "sentence's path.",
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
                       "keeps the runner-up first word and finds {beam}, log P = {lb}: a slightly less likely "
                       "first word after which the model is much surer, so the sentence as a whole is more likely.",
    "gen.compare_open": "Open this example in the app",
    # training page
    "page.train": "Training",
    "intro.train": "The model learns by **teacher forcing**: the decoder reads the correct target shifted right "
                   "(SOS first) and at every position is scored by the cross-entropy of the next correct token. "
                   "Backpropagation gives every weight its gradient, and the optimiser (Adam, with the paper's "
                   "warm-up schedule) moves the weights a little against it. Train a small model on our corpus "
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
    # encoder stack
    "stack.layer_output": "Output of layer {l}",
}

ZH = {
    "section.start": "开始",
    "section.encoder": "编码器",
    "section.decoder": "解码器",
    "section.compare": "对比",
    "lang.label": "语言",
    "ctl.preset": "预设",
    "ctl.src": "源句子",
    "ctl.tgt": "目标前缀（解码器读入 SOS + 这些词）",
    "ctl.options": "模型选项",
    "ctl.sizes": "维度",
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
    "ctl.weights": "正在使用训练或载入的权重（{id}）：所有页面都从它们开始。",
    "ctl.drop_weights": "回到预设的随机权重",
    "ctl.edits": "部分权重已修改：每一页都使用修改后的权重。",
    "ctl.layer": "层",
    "ctl.share": "分享这个例子：复制本页地址（其中包含所有设置和修改）。",
    "choice.paper": "论文",
    "choice.blog": "博客",
    "choice.post": "后置归一化 (Post-Norm，论文)",
    "choice.pre": "前置归一化 (Pre-Norm，Annotated Transformer)",
    "choice.sinusoidal": "正弦/余弦（论文）",
    "choice.blog_table": "博客打印的表",
    "choice.learned": "可学习",
    "choice.none": "无",
    "choice.relu": "ReLU",
    "choice.gelu": "GELU",
    "choice.stable": "稳定（先减去每行最大值）",
    "choice.naive": "朴素（博客的写法）",
    "preset.hello-world": "Hello World（博客，4 维）",
    "preset.paper": "论文（512 维）",
    "msg.kept": "{error} —— 已保留之前的设置。",
    "msg.url": "链接中的一部分被忽略：{detail}",
    "msg.unknown": "不在词汇表中，按 <unk> 处理：{words}",
    "msg.nonfinite": "部分数值不是有限数（∞ 或 NaN），最早出现在步骤 {step}。",
    "msg.edit_bad": "{param}[{index}]：{value!r} 不是介于 −1,000,000 和 1,000,000 之间的有限数；已保留原值。",
    "msg.edits_dropped": "{n} 处修改与模型的新维度不符，已被丢弃。",
    "msg.too_big": "为保证页面流畅，{field} 在本应用中最多为 {high}（请求的是 {value}）。",
    "msg.too_long": "{side}有 {n} 个 token；本应用最多显示 {high} 个。",
    "msg.text_cut": "{side}有 {n} 个字符；只保留前 {high} 个。",
    "msg.empty": "源句子为空：请至少输入一个词。",
    "msg.weights_gone": "这个链接中训练好的权重（{id}）已不在本服务器上；现在使用预设的随机权重。",
    "msg.not_divisible": "d_model（{d_model}）不能被 n_heads（{n_heads}）整除：请选择能整除的维度，或自己设置 d_k 和 d_v",
    "side.src": "源句子",
    "side.tgt": "目标前缀",
    "view.shape": "形状",
    "view.drill": "这个格子是怎么算出来的？",
    "view.drill_hint": "点击热力图中的格子，或在这里选择。",
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
    "page.multihead": "拼接 (Concat) 与 W^O",
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
    "intro.positional": "注意力本身不考虑词序，所以要把位置编码（每个位置一个向量）加到词嵌入上。论文使用不同频率的"
                        "正弦和余弦。",
    "intro.qkv": "每个头用自己的三个矩阵乘以输入：查询（token 在找什么）、键（token 提供什么）和值（token 传递什么）。",
    "intro.attention": "每个查询与每个键做点积，再做缩放使数值不至于过大，然后用 softmax 变成和为 1 的注意力权重。"
                       "每个头的输出是其值向量的加权和。",
    "intro.multihead": "把各个头的输出拼接 (Concat) 起来，再乘以 W^O（输出投影），把它们混合回每个 token 的 d_model 个数。",
    "intro.add_norm": "把子层的输入加到它的输出上（残差连接），再把每一行归一化为均值 0、方差 1，然后乘以 γ、加上 β。",
    "intro.ffn": "同一个小的两层网络分别作用于每个位置：先扩展到 d_ff，经过 ReLU，再变回 d_model。",
    "intro.encoder_stack": "编码器把注意力和前馈网络重复 N 次；每一层的输出是下一层的输入。最后一层的输出供解码器的"
                           "交叉注意力读取。",
    "intro.decoder_input": "解码器读入右移后的目标序列：起始符 SOS，然后是已有的词。它们像源句子一样做词嵌入和位置编码。",
    "intro.masked_attention": "在解码器的自注意力中，一个位置不能看到后面的位置：因果掩码在对角线上方加上 −∞，"
                              "softmax 之后这些格子的权重为 0。",
    "intro.cross_attention": "这里查询来自解码器，键和值来自编码器的输出：每个目标位置都能看到整个源句子。",
    "intro.output": "最后的线性层给词汇表中的每个词打分 (logits)，softmax 把分数变成概率分布。最后一个位置上概率最大的词"
                    "就是下一个 token（贪心）。",
    "intro.paper_vs_blog": "博客在一些地方简化了论文，而且它的正文与代码有时不一致。本应用遵循代码；每处差异都列在这里，"
                           "并给出两种算法的数值。",
    "desc.embed": "查出每个 token 在嵌入矩阵中的那一行。",
    "desc.pos": "每个位置的位置编码。",
    "desc.input": "词嵌入加位置编码：第一层的输入。",
    "desc.attn.q": "每个头的查询 (Q)。",
    "desc.attn.k": "每个头的键 (K)。",
    "desc.attn.v": "每个头的值 (V)。",
    "desc.attn.scores": "每个查询与每个键的点积（注意力分数）。",
    "desc.attn.scaled": "缩放后的注意力分数，避免 softmax 饱和。",
    "desc.attn.mask": "因果掩码：一个位置不能看到后面的位置。",
    "desc.attn.masked": "分数加上掩码：后面的位置变成 −∞。",
    "desc.attn.weights": "每一行的 softmax：注意力权重，和为 1。",
    "desc.attn.heads": "每个头的输出：值向量的加权和。",
    "desc.attn.concat": "把各个头的输出拼接 (Concat) 起来。",
    "desc.attn.out": "用 W^O（输出投影）把各个头混合回 d_model 维。",
    "desc.add": "残差连接：子层的输入加上它的输出。",
    "desc.ln": "对每一行（每个 token）做层归一化。",
    "desc.ffn.hidden": "第一个线性层：扩展到 d_ff 维。",
    "desc.ffn.act": "激活函数（ReLU 或 GELU）。",
    "desc.ffn.out": "第二个线性层：变回 d_model 维。",
    "desc.enc.out": "编码器的输出，供每个交叉注意力读取。",
    "desc.dec.out": "解码器的输出。",
    "desc.logits": "每个解码器位置上词汇表中每个词的分数 (logits)。",
    "desc.probs": "每个词成为下一个 token 的概率。",
    "overview.flow": "数据现在在哪里",
    "overview.src": "源 token",
    "overview.tgt": "解码器输入",
    "overview.next": "下一个 token（贪心）",
    "overview.prob": "概率",
    "overview.steps": "所有步骤",
    "overview.shapes": "{n_src} 个源 token，{n_tgt} 个解码器位置，d_model = {d_model}，{h} 个头，N = {n_layers} 层",
    "tokens.table": "Token",
    "tokens.token": "token",
    "tokens.id": "id",
    "tokens.known": "在词汇表中",
    "tokens.yes": "是",
    "tokens.no": "否 → <unk>",
    "output.top": "最可能的下一个 token",
    "output.position": "解码器位置",
    "compare.post": "博客",
    "compare.engine": "本应用 / 论文",
    "compare.pe": "“World”（位置 1）的位置编码",
    "compare.weights": "第 1 个头的注意力权重：除以 √3（论文）或除以 30（博客）",
    "compare.ln": "E + Z 第一行的层归一化：博客的形式与论文的形式",
    "compare.divisor_sqrt": "÷ √3",
    "compare.divisor_30": "÷ 30",
    "compare.form_blog": "(x − μ)/(σ + ε)，ε = 1e−6",
    "compare.form_paper": "(x − μ)/√(σ² + ε)，ε = 1e−5",
    # 生成页
    "section.generate": "生成与训练",
    "page.generate": "生成（自回归解码）",
    "intro.generate": "在测试模式下，解码器一次写出一个 token：从起始符 SOS 开始，运行整个模型，从最后一行的概率中选出下一个 "
                      "token，把它接到输入后面再运行一次，直到写出结束符 EOS。下面的每一步都是一次完整的前向计算。"
                      "每次都取概率最大的 token（贪心）可能错过整体概率更大的句子；采样带来多样性，束搜索同时保留几个句子（第二个标签页有一个例子）。",
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
    "gen.probs": "模型给出的下一个 token 的概率（P 的最后一行）",
    "gen.sampled": "实际采样所用的概率分布（经过温度 / top-k / top-p 之后）",
    "gen.open_step": "在所有页面上显示这一步的前向计算",
    "gen.score": "得分",
    "gen.beam_best": "**最佳句子**：{text} —— log P = {logp}，得分 = {score}",
    "gen.beam_legend": "每个方框是一个前缀和它的对数概率；句子结束处还有长度归一化后的得分。"
                       "边上的数是模型给这个 token 的概率。灰色虚线：被剪掉（不在最好的束宽个之内）；双边框：以 EOS 结束；红色：最佳句子的路径。",
    "gen.col.rank": "名次",
    "gen.col.text": "句子",
    "gen.col.length": "长度",
    "gen.col.finished": "以 EOS 结束",
    "gen.compare": "贪心与束搜索：一个结果不同的例子",
    "gen.tab.run": "解码当前句子",
    "gen.tab.compare": "贪心与束搜索",
    "gen.compare_setup": "一个论文结构的小模型（d_model 16，2 个头，1 层，随机权重）翻译“{src}”，束宽 {width}。",
    "gen.compare_why": "贪心每一步都取概率最大的 token：{greedy}，log P = {lg}。束搜索同时保留了第二可能的第一个词，"
                       "找到 {beam}，log P = {lb}：第一个词的概率略低，但之后模型把握大得多，所以整句的概率更大。",
    "gen.compare_open": "在应用中打开这个例子",
    # 训练页
    "page.train": "训练",
    "intro.train": "模型用**教师强制**学习：解码器读入右移后的正确目标（SOS 在前），每个位置都用下一个正确 token 的"
                   "交叉熵打分。反向传播给出每个权重的梯度，优化器（Adam，采用论文的预热学习率）沿梯度的反方向把权重"
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
    "stack.layer_output": "第 {l} 层的输出",
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
    "the post's printed value": "博客打印的数值",
    "its formula: ": "按公式：",
    ": a later position": "：后面的位置",
    "kept": "保留",
    "dropped; it was ": "被丢弃；原值为 ",
    "decoder input": "解码器输入",
    "ignore": "忽略",
    " even": " 为偶数",
    " odd": " 为奇数",
    "(the post's printed table)": "（博客打印的表）",
    "(a learned table)": "（学习得到的表）",
}}


# The words of the engine's plain-text arithmetic (Explanation.text), as (pattern, replacement) pairs.
PLAIN_WORDS = {"zh": [
    (r"^With (.*?): ", r"其中 \1："),
    (r" and σ² = ", "，σ² = "),
    (r"\(no positional encoding\)", "（没有位置编码）"),
    (r"\(learned\)", "（学习得到）"),
    (r"the post's printed value \(its formula: (.*)\) = ", r"博客打印的数值（按公式：\1） = "),
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
    "diff.wq1.topic": "第 1 个头的 W_Q",
    "diff.wq1.why": "博客正文中的 LaTeX 与代码不一致；数值是代码算出来的：Q1 = [[8, 3, 3], [9.99, 3.99, 4]] 需要代码里的矩阵。",
    "diff.wk2.topic": "第 2 个头的 W_K",
    "diff.wk2.why": "第 2 个头的数值同样来自代码中的矩阵。",
    "diff.pe_formula.topic": "位置编码的指数",
    "diff.pe_formula.why": "对 World，论文给出 [0.841, 0.540, 0.0100, 0.99995]，博客给出 [0.84, 0.99, 0, 1]。"
                           "hello-world 预设沿用博客的表；pos_encoding='sinusoidal' 是论文的公式。",
    "diff.pe_rounding.topic": "博客打印的位置编码",
    "diff.pe_rounding.why": "博客把 0.99995 截断为 0.99，之后一直使用 2.84、3.99；pos_encoding='blog' 精确计算博客的公式，"
                            "'blog_table' 使用它打印的数。",
    "diff.divisor.topic": "注意力缩放除数",
    "diff.divisor.why": "除以 √3 时权重饱和为 [4.68e−10, 1]；博客临时改为除以 30，才得到它的 Z。",
    "diff.layer_norm.topic": "层归一化的形式",
    "diff.layer_norm.why": "博客正文写的是论文的形式；算出数值的代码把 ε 加在标准差上。",
    "diff.ln_rounding.topic": "博客打印的层归一化结果",
    "diff.ln_rounding.why": "正文把 1.7188 截断为 1.718。",
    "diff.z_digits.topic": "正文中的 Z",
    "diff.z_digits.why": "正文重新抄写 Z 时最后几位不同；由 W^O 算出的是代码的输出。",
    "diff.embed_scale.topic": "嵌入的缩放",
    "diff.embed_scale.why": "论文把嵌入乘以 √d_model；博客没有。",
    "diff.mask.topic": "因果掩码",
    "diff.mask.why": "博客跳过了掩码（“We'll skip this for now”）。只有一个 SOS 时掩码不起作用；目标更长时它遮住未来的位置。",
    "diff.softmax.topic": "softmax",
    "diff.softmax.why": "分数超过约 709 时博客的写法会溢出为 NaN（它没有层归一化的 6 层堆叠就是如此）；"
                        "softmax='naive' 可以复现。",
    "diff.w_o_random.topic": "更深层的 W^O",
    "diff.w_o_random.why": "博客每次调用都重新随机生成 W^O；参数必须固定，数值才能复现、才能修改。",
    "diff.generate.topic": "生成时的解码器输入",
    "diff.generate.why": "博客的 generate 循环只输入最后一个 token，没有位置编码和掩码；论文的解码器会关注之前输出的每一个 token。",
})
