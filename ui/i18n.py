"""Every user-facing string, in English and Simplified Chinese (terms from shared/GLOSSARY.md)."""
from engine.blog import DIFFERENCES

LANGUAGES = {"en": "English", "zh": "简体中文"}

EN = {
    # app frame
    "app.title": "Transformer, step by step",
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
    "ctl.edits": "{n} edited weight(s)",
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
    "preset.hello-world": "Hello World (the blog's 4-d example)",
    "preset.paper": "Paper (512-d base model)",
    # messages
    "msg.kept": "{error} — the previous settings are kept.",
    "msg.url": "Part of the link was ignored: {detail}",
    "msg.unknown": "Not in the vocabulary, read as <unk>: {words}",
    "msg.nonfinite": "Some numbers are not finite (∞ or NaN), first at step {step}.",
    "msg.edit_bad": "{param}[{index}]: {value!r} is not a finite number between −1,000,000 and 1,000,000; the old value is kept.",
    "msg.edits_dropped": "{n} edit(s) no longer fit the model's sizes and were dropped.",
    "msg.too_big": "{field} is limited to {high} in the app (asked for {value}), so pages stay fast.",
    "msg.too_long": "The {side} has {n} tokens; the app shows at most {high}.",
    "msg.empty": "The source sentence is empty: type at least one word.",
    "side.src": "source sentence",
    "side.tgt": "target prefix",
    # step view
    "view.formula": "Formula",
    "view.shape": "Shape",
    "view.numbers": "Numbers",
    "view.heatmap": "Heatmap",
    "view.drill": "How was this cell computed?",
    "view.drill_hint": "Click a cell of the heatmap, or pick it here.",
    "view.row": "Row",
    "view.col": "Column",
    "view.head": "Head",
    "view.edit": "Edit {name}",
    "view.edit_hint": "Double-click a cell, type a number, press Enter: every later step is recomputed.",
    "view.reset": "Reset {name}",
    "view.big": "This matrix is {rows} × {cols}: shown as a heatmap only.",
    "view.plain": "Plain text",
    "view.input": "Input",
    "view.output": "Output",
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
    "compare.topic": "Topic",
    "compare.post": "The blog",
    "compare.engine": "The app / the paper",
    "compare.why": "Why it matters",
    "compare.pe": "Positional encoding of “World” (position 1)",
    "compare.weights": "Head 1 attention weights: divide by √3 (paper) or by 30 (blog)",
    "compare.ln": "LayerNorm of the first row of E + Z: the blog's form vs the paper's",
    "compare.divisor_sqrt": "÷ √3",
    "compare.divisor_30": "÷ 30",
    "compare.form_blog": "(x − μ)/(σ + ε), ε = 1e−6",
    "compare.form_paper": "(x − μ)/√(σ² + ε), ε = 1e−5",
    # encoder stack
    "stack.layer_output": "Output of layer {l}",
    "stack.layer_change": "How much each layer changes the tokens",
    "stack.norm": "row norm ‖x‖",
}

ZH = {
    "app.title": "Transformer，一步一步",
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
    "ctl.edits": "已修改 {n} 个权重",
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
    "preset.hello-world": "Hello World（博客的 4 维例子）",
    "preset.paper": "论文（512 维基础模型）",
    "msg.kept": "{error} —— 已保留之前的设置。",
    "msg.url": "链接中的一部分被忽略：{detail}",
    "msg.unknown": "不在词汇表中，按 <unk> 处理：{words}",
    "msg.nonfinite": "部分数值不是有限数（∞ 或 NaN），最早出现在步骤 {step}。",
    "msg.edit_bad": "{param}[{index}]：{value!r} 不是介于 −1,000,000 和 1,000,000 之间的有限数；已保留原值。",
    "msg.edits_dropped": "{n} 处修改与模型的新维度不符，已被丢弃。",
    "msg.too_big": "为保证页面流畅，{field} 在本应用中最多为 {high}（请求的是 {value}）。",
    "msg.too_long": "{side}有 {n} 个 token；本应用最多显示 {high} 个。",
    "msg.empty": "源句子为空：请至少输入一个词。",
    "side.src": "源句子",
    "side.tgt": "目标前缀",
    "view.formula": "公式",
    "view.shape": "形状",
    "view.numbers": "数值",
    "view.heatmap": "热力图",
    "view.drill": "这个格子是怎么算出来的？",
    "view.drill_hint": "点击热力图中的格子，或在这里选择。",
    "view.row": "行",
    "view.col": "列",
    "view.head": "头",
    "view.edit": "修改 {name}",
    "view.edit_hint": "双击格子，输入数字并回车：之后的每一步都会重新计算。",
    "view.reset": "重置 {name}",
    "view.big": "这个矩阵是 {rows} × {cols}：只显示热力图。",
    "view.plain": "纯文本",
    "view.input": "输入",
    "view.output": "输出",
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
    "compare.topic": "主题",
    "compare.post": "博客",
    "compare.engine": "本应用 / 论文",
    "compare.why": "为什么重要",
    "compare.pe": "“World”（位置 1）的位置编码",
    "compare.weights": "第 1 个头的注意力权重：除以 √3（论文）或除以 30（博客）",
    "compare.ln": "E + Z 第一行的层归一化：博客的形式与论文的形式",
    "compare.divisor_sqrt": "÷ √3",
    "compare.divisor_30": "÷ 30",
    "compare.form_blog": "(x − μ)/(σ + ε)，ε = 1e−6",
    "compare.form_paper": "(x − μ)/√(σ² + ε)，ε = 1e−5",
    "stack.layer_output": "第 {l} 层的输出",
    "stack.layer_change": "每一层对 token 的改变有多大",
    "stack.norm": "行范数 ‖x‖",
}

CATALOGS = {"en": EN, "zh": ZH}


def language_of(locale: str | None) -> str:
    """The app's language for a browser locale such as "zh-CN" or "en-US"."""
    return "zh" if (locale or "").lower().startswith("zh") else "en"


def translator(lang: str):
    catalog = CATALOGS.get(lang, EN)

    def t(key: str, **values) -> str:
        text = catalog.get(key, EN[key])
        return text.format(**values) if values else text

    return t

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
