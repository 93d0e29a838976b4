"""poslib's language setting and its gettext catalogues (issue 46 items 2 and 6).

The language is explicit (set_language, else POSLIB_LANG, else English), `import poslib` loads none of this machinery,
the catalogues hold every template in Chinese with its fields and numbers, and they ship inside the wheel: a
non-editable install in a fresh environment writes Chinese.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import textwrap
import venv
from pathlib import Path

import pytest

import poslib.language as language

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _english_afterwards(monkeypatch):
    monkeypatch.delenv("POSLIB_LANG", raising=False)
    yield
    language.set_language(None)


def test_the_language_is_english_unless_chosen():
    assert language.language() == "en"


def test_an_explicit_choice_beats_the_environment(monkeypatch):
    monkeypatch.setenv("POSLIB_LANG", "zh")
    assert language.language() == "zh"
    language.set_language("en")
    assert language.language() == "en"
    language.set_language(None)
    assert language.language() == "zh"


@pytest.mark.parametrize("bad", ["fr", "zh-CN", "", "EN"])
def test_an_unknown_language_is_refused_by_name(bad):
    with pytest.raises(ValueError, match=r"set_language\(lang\) must be one of 'en', 'zh'"):
        language.set_language(bad)


def test_an_unknown_language_in_the_environment_is_refused_by_name(monkeypatch):
    monkeypatch.setenv("POSLIB_LANG", "fr")
    with pytest.raises(ValueError, match="POSLIB_LANG must be one of"):
        language.language()


def test_an_unknown_domain_is_refused_by_name():
    with pytest.raises(ValueError, match="domain must be one of 'exercises', 'lab', 'widgets'"):
        language.translator("verdicts")


def test_a_template_is_looked_up_in_the_language_of_the_call():
    _ = language.translator("lab")
    # any template the lab catalogue translates will do: take the first one from the .po itself
    from babel.messages.pofile import read_po

    with open(language.LOCALE / "zh" / "LC_MESSAGES" / "lab.po", "rb") as f:
        message = next(m for m in read_po(f) if m.id and m.string)
    assert _(message.id) == message.id
    language.set_language("zh")
    assert _(message.id) == message.string
    assert _("a sentence no catalogue holds") == "a sentence no catalogue holds"


def test_importing_poslib_loads_no_language_machinery_and_touches_no_stream():
    code = textwrap.dedent(
        """
        import sys
        import ipykernel  # as in a notebook's kernel
        stdout, stderr = sys.stdout, sys.stderr
        before = set(sys.modules)  # the kernel itself loads gettext (through argparse): count what poslib loads
        import poslib
        assert sys.stdout is stdout and sys.stderr is stderr, "import poslib replaced a stream"
        loaded = sorted(m for m in set(sys.modules) - before if m in ("poslib.language", "gettext", "poslib.exercises"))
        print(loaded)
        assert poslib.set_language is __import__("poslib.language").language.set_language
        """
    )
    env = {**os.environ, "POSLIB_LANG": "zh"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_student_print_in_a_chinese_kernel_prints_itself():
    code = 'import ipykernel\nimport poslib\nposlib.set_language("zh")\nprint("check: my homework")\n'
    env = {**os.environ, "POSLIB_LANG": "zh"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert out.stdout == "check: my homework\n"


def test_the_catalogues_are_complete_and_keep_every_field_and_number():
    out = subprocess.run(
        [sys.executable, "scripts/catalogues.py", "check"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert out.returncode == 0 and out.stdout.strip() == "no problems", out.stdout + out.stderr


def test_a_missing_catalogue_is_an_error_not_english(monkeypatch, tmp_path):
    monkeypatch.setattr(language, "LOCALE", tmp_path)
    language._catalogue.cache_clear()
    language.set_language("zh")
    try:
        with pytest.raises(FileNotFoundError):
            language.translate("lab", "anything")
    finally:
        language._catalogue.cache_clear()


def test_the_built_wheel_installed_in_a_fresh_environment_writes_chinese(tmp_path):
    """pip builds the wheel, a fresh venv installs it (not editable) and, run away from the checkout, an exercise
    checker answers a wrong answer in Chinese from the catalogue inside the installed package."""
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation", "-q", "-w", wheels],
        check=True,
        capture_output=True,
    )
    (wheel,) = wheels.glob("poslib-*.whl")
    env_dir = tmp_path / "env"
    venv.create(env_dir, with_pip=True)
    python = env_dir / ("Scripts" if os.name == "nt" else "bin") / "python"
    subprocess.run([python, "-m", "pip", "install", "--no-deps", "--no-index", "-q", wheel], check=True)
    # the dependencies (numpy, torch, ...) come from this environment, poslib only from the fresh one
    deps = sysconfig.get_paths()["purelib"]
    code = textwrap.dedent(
        f"""
        import sys
        sys.path.append({deps!r})
        import poslib
        assert poslib.__file__.startswith({str(env_dir)!r}), poslib.__file__
        poslib.set_language("zh")
        from poslib.exercises import nb05
        print(repr(nb05.check_rotated_pair([1.0, 2.0])))
        """
    )
    run_dir = tmp_path / "elsewhere"
    run_dir.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "POSLIB_LANG")}
    out = subprocess.run([python, "-c", code], cwd=run_dir, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    # the English, for the same answer: "not yet: values: your answer differs from the expected value by up to 1.86
    # at entry 0"
    assert out.stdout.strip() == "还不对。数值：你的答案与正确值最多相差 1.86（在下标 0 处）", out.stdout
