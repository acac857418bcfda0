"""Write the OTLP JSON files of tests/traces/otlp/ from the traced agents.

    python tests/traces/make_otlp.py            # every source this environment can run
    python tests/traces/make_otlp.py --flat     # OpenLLMetry's flat attributes (see README)
    python tests/traces/make_otlp.py NAME ...   # some sources

Each source writes ``NAME.otlp.jsonl`` (the spans, as the Collector's file exporter writes
them) and ``NAME.expected.json`` (what the run did, from the wire fake's side: per model
request the tools offered and the calls made; and the package versions that made it).
Everything runs in process against the harness's wire fake: no network.
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import traced_agents as agents

FOLDER = Path(__file__).parent / "otlp"


def write(source: agents.Source) -> None:
    from opentelemetry.exporter.otlp.json.common.trace_encoder import encode_spans

    recorded = agents.record(source)
    document = encode_spans(recorded.spans).to_dict()
    (FOLDER / f"{source.name}.otlp.jsonl").write_text(
        json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8"
    )
    packages = ("opentelemetry-sdk", *source.packages)
    expected = {
        "source": source.name,
        "made_with": {p: version(p) for p in packages},
        "content": source.content,
        "requests": agents.expected(recorded.wire),
    }
    (FOLDER / f"{source.name}.expected.json").write_text(agents.dumps(expected), encoding="utf-8")
    print(f"wrote {source.name}: {len(recorded.spans)} spans")


def main(argv: list[str]) -> None:
    table = agents.FLAT_SOURCES if "--flat" in argv else agents.SOURCES
    names = [a for a in argv if not a.startswith("--")] or list(table)
    FOLDER.mkdir(exist_ok=True)
    if len(names) == 1:
        write(table[names[0]])
        return
    for name in names:  # one process each: an instrumentation may leave wrappers behind
        flags = ["--flat"] if "--flat" in argv else []
        subprocess.run([sys.executable, __file__, *flags, name], check=True)


if __name__ == "__main__":
    main(sys.argv[1:])
