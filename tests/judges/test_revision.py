"""The offline judges' versions name the revision of the code that reads words and figures."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest

from ground_integrations import GroundednessChecker
from ground_integrations.judges import HeuristicJudge, _revision
from ground_integrations.judges._revision import (
    COMPUTED_ON,
    LEXICAL_CODE,
    code_digest,
    current_digest,
    module_paths,
)

ROOT = Path(__file__).resolve().parents[2]
PYTHON = f"{sys.version_info[0]}.{sys.version_info[1]}"

RULE = '''"""A rule."""

UNITS = {"litre": "l", "gallon": "gal"}


def scale(word):
    """How many."""
    return {"million": 6}.get(word, 0)
'''


def test_the_recorded_revision_is_the_code_as_it_is() -> None:
    """Changing what the judges read without recording it fails here, naming the command."""
    if PYTHON != COMPUTED_ON:
        pytest.skip(f"the revision was recorded on Python {COMPUTED_ON}, this is {PYTHON}")
    assert all(path.is_file() for path in module_paths()), "a module in MODULES was moved"
    assert current_digest() == LEXICAL_CODE, (
        "the offline judges' code changed: run `python benchmarks/code_revision.py --write` "
        "and rerun what names the judge's version"
    )


def test_comments_docstrings_and_layout_are_not_a_new_revision() -> None:
    reworded = (
        RULE.replace('"""A rule."""', '"""Another way to say it."""')
        .replace('"""How many."""', "# a comment instead")
        .replace('{"litre": "l", "gallon": "gal"}', '{\n    "litre": "l",\n    "gallon": "gal",\n}')
    )
    assert code_digest([reworded]) == code_digest([RULE])
    # a function whose docstring was all of it still parses to a function
    assert code_digest(['def f():\n    """Only this."""\n']) == code_digest(
        ["def f():\n    pass\n"]
    )


def test_a_changed_word_or_rule_is_a_new_revision() -> None:
    base = code_digest([RULE])
    assert code_digest([RULE.replace('"gallon": "gal"', '"gallon": "l"')]) != base
    assert code_digest([RULE.replace("get(word, 0)", "get(word, 1)")]) != base
    # the modules are read in order: moving a line between two of them counts
    assert code_digest(["A = 1\nB = 2\n", "C = 3\n"]) != code_digest(["A = 1\n", "B = 2\nC = 3\n"])


def test_both_offline_judges_carry_it() -> None:
    assert HeuristicJudge.version == f"1.4+lex.{LEXICAL_CODE}"
    result = GroundednessChecker().check(context=["It rained."], answer="It rained.")
    assert result.judge.version.endswith(f"+lex.{LEXICAL_CODE}")
    assert result.judge.version.startswith("2+stack.3+")


def test_the_script_prints_checks_and_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    spec = importlib.util.spec_from_file_location(
        "code_revision", ROOT / "benchmarks" / "code_revision.py"
    )
    assert spec and spec.loader
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    current = current_digest()

    # a stale record: the check exits 1 and says so
    copy = tmp_path / "_revision.py"
    shutil.copyfile(_revision.__file__, copy)
    monkeypatch.setattr(_revision, "__file__", str(copy))
    monkeypatch.setattr(_revision, "LEXICAL_CODE", "deadbeef")
    stale = copy.read_text(encoding="utf-8").replace(
        f'LEXICAL_CODE = "{LEXICAL_CODE}"', 'LEXICAL_CODE = "deadbeef"'
    )
    copy.write_text(stale, encoding="utf-8")
    assert script.main([]) == 1
    assert capsys.readouterr().out.strip() == f"{current} (recorded: deadbeef, stale)"

    # --write records the digest (and the Python it was computed on) in that file only
    assert script.main(["--write"]) == 0
    written = copy.read_text(encoding="utf-8")
    assert f'LEXICAL_CODE = "{current}"' in written and f'COMPUTED_ON = "{PYTHON}"' in written
    assert "deadbeef" not in written
    assert capsys.readouterr().out.strip() == f"deadbeef -> {current} (Python {PYTHON})"
