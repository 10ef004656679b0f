"""Two tiny parallel corpora to train on, written for this project: English to Spanish and English to Chinese.

Both share the same English sentences, kept short and in the spirit of the paper vocabulary (greetings, the
cat sat on the mat, attention is all you need). They are two corpora rather than one because an English
sentence can have only one target to learn. Chinese is read one character per token (engine.tokens).

    from engine.corpus import pairs
    pairs("en-es")[0]     # ("Hello World", "Hola Mundo")
"""
from __future__ import annotations

# (English, Spanish, Chinese)
SENTENCES = (
    ("Hello World", "Hola Mundo", "你好世界"),
    ("good morning", "buenos días", "早上好"),
    ("good afternoon", "buenas tardes", "下午好"),
    ("good night", "buenas noches", "晚安"),
    ("goodbye", "adiós", "再见"),
    ("see you tomorrow", "hasta mañana", "明天见"),
    ("thank you", "gracias", "谢谢"),
    ("thank you very much", "muchas gracias", "非常感谢"),
    ("how are you?", "¿cómo estás?", "你好吗？"),
    ("yes", "sí", "是的"),
    ("no", "no", "不"),
    ("hello my friend", "hola mi amigo", "你好我的朋友"),
    ("the cat sat on the mat", "el gato se sentó en la alfombra", "猫坐在垫子上"),
    ("the dog sat on the mat", "el perro se sentó en la alfombra", "狗坐在垫子上"),
    ("the cat is small", "el gato es pequeño", "猫很小"),
    ("the dog is big", "el perro es grande", "狗很大"),
    ("the cat sleeps", "el gato duerme", "猫在睡觉"),
    ("the dog runs", "el perro corre", "狗在跑"),
    ("where is the cat?", "¿dónde está el gato?", "猫在哪里？"),
    ("the cat and the dog are friends", "el gato y el perro son amigos", "猫和狗是朋友"),
    ("I am a cat", "yo soy un gato", "我是一只猫"),
    ("I am a student", "yo soy estudiante", "我是学生"),
    ("we are students", "nosotros somos estudiantes", "我们是学生"),
    ("I love you", "te quiero", "我爱你"),
    ("I love learning", "me encanta aprender", "我爱学习"),
    ("we love learning", "nosotros amamos aprender", "我们爱学习"),
    ("I like the dog", "me gusta el perro", "我喜欢狗"),
    ("learning is good", "aprender es bueno", "学习很好"),
    ("the world is big", "el mundo es grande", "世界很大"),
    ("attention is all you need", "la atención es todo lo que necesitas", "你只需要注意力"),
    ("attention is important", "la atención es importante", "注意力很重要"),
    ("I need attention", "necesito atención", "我需要注意力"),
)
CORPORA = {
    "en-es": tuple((en, es) for en, es, _ in SENTENCES),
    "en-zh": tuple((en, zh) for en, _, zh in SENTENCES),
}
DESCRIPTIONS = {
    "en-es": "English to Spanish: greetings, cats and dogs on mats, attention.",
    "en-zh": "English to Chinese, one character per token: the same English sentences.",
}


def pairs(name: str) -> tuple:
    """The (source, target) sentence pairs of the named corpus."""
    if name not in CORPORA:
        raise ValueError(f"unknown corpus {name!r}; choose one of {', '.join(CORPORA)}")
    return CORPORA[name]
