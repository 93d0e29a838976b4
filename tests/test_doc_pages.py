"""The reference pages that have a Chinese twin (docs/X.md and docs/zh/X.md): the Chinese page keeps the edition's
terms and typography, and each page is linked from where a reader starts (the READMEs, docs/lab.md and its twin,
docs/benchmarks.md).

Each page's own content (questions in the sources' order, threads, links to checking cells) is tested beside it:
tests/test_questions.py, tests/test_faq.py. docs/zh/lab.md is held here to docs/lab.md section by section (cut at
the headings, as scripts/i18n.py cuts a document): the same formulas, code spans, link targets (the Chinese ones
in notebooks/zh/ and docs/zh/) and numbers, so an edit of the English page that changes a number fails until the
Chinese page says it too; and every Chinese page that cites the lab's page cites docs/zh/lab.md.
"""

from __future__ import annotations

import re

import pytest
from i18n_script import ROOT, i18n
from test_i18n_terms import TERMS, chinese_text

# page -> (where the English page is linked, where the Chinese page is linked)
PAGES = {
    "questions": ("README.md", "README.zh-CN.md"),
    "faq": ("README.md", "README.zh-CN.md"),
    "literature": ("docs/lab.md", "docs/zh/lab.md"),
    "lab": ("docs/benchmarks.md", None),  # the Chinese notebooks 11 and 12 cite it (test below)
}


@pytest.mark.parametrize("page", sorted(PAGES))
def test_the_chinese_page_keeps_the_editions_terms_and_typography(page: str) -> None:
    path = ROOT / "docs" / "zh" / f"{page}.md"
    found = [f"{concept}: {m.group(0)!r} (use {form})" for concept, (form, others) in TERMS.items()
             for m in re.finditer(others, chinese_text(path))]  # fmt: skip
    assert not found, "\n".join(found)
    assert not i18n.typography_problems(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("page", sorted(PAGES))
def test_each_page_is_linked_and_its_links_go_to_its_twin(page: str) -> None:
    english_home, chinese_home = PAGES[page]
    en = (ROOT / "docs" / f"{page}.md").read_text(encoding="utf-8")
    zh = (ROOT / "docs" / "zh" / f"{page}.md").read_text(encoding="utf-8")
    home = ROOT / english_home
    target = f"docs/{page}.md" if home.parent == ROOT else f"{page}.md"
    assert f"]({target})" in home.read_text(encoding="utf-8"), f"{english_home} does not link {target}"
    if chinese_home is not None:
        target = f"docs/zh/{page}.md" if (ROOT / chinese_home).parent == ROOT else f"{page}.md"
        assert f"]({target})" in (ROOT / chinese_home).read_text(encoding="utf-8"), f"{chinese_home}: {target}"
    assert f"{page}.md" in i18n.LOCALIZED
    assert i18n.localize_link(f"docs/{page}.md", "zh", "root") == f"docs/zh/{page}.md"
    if page in ("questions", "faq"):  # the two question pages link each other's language
        assert f"](zh/{page}.md)" in en and f"](../{page}.md)" in zh


LAB = {"en": ROOT / "docs" / "lab.md", "zh": ROOT / "docs" / "zh" / "lab.md"}


def lab_pair_problems(english: str, chinese: str) -> list[str]:
    """One line per section of the Chinese lab page that does not keep its English section's formulas, code
    spans, link targets (as the Chinese page writes them: scripts/i18n.py localize_links) and numbers."""
    en, zh = i18n.doc_sections(english), i18n.doc_sections(chinese)
    heads = [s.splitlines()[0] for s in en]
    if len(en) != len(zh):
        return [f"docs/lab.md has {len(en)} sections ({heads}), docs/zh/lab.md {len(zh)}: cut at the same headings"]
    problems = []
    for head, a, b in zip(heads, en, zh, strict=True):
        if re.match(r"#+", head).group(0) != re.match(r"#+", b.splitlines()[0]).group(0):
            problems.append(f"section {head!r}: its Chinese heading is at another level")
        problems += [f"section {head!r}: {p}" for p in i18n.compare(i18n.localize_links(a, "zh", "docs"), b)]
    return problems


def test_the_chinese_lab_page_says_what_the_english_one_says() -> None:
    """docs/zh/lab.md, section by section, has docs/lab.md's numbers, formulas, code and link targets: an edit of
    the English page that changes any of them fails here, naming the section, until the Chinese page has it."""
    problems = lab_pair_problems(LAB["en"].read_text(encoding="utf-8"), LAB["zh"].read_text(encoding="utf-8"))
    assert not problems, "docs/zh/lab.md is behind docs/lab.md:\n" + "\n".join(problems)


def test_the_lab_pair_check_catches_a_changed_number_a_lost_section_and_an_english_link() -> None:
    en, zh = LAB["en"].read_text(encoding="utf-8"), LAB["zh"].read_text(encoding="utf-8")
    assert "| sandwich | 6.64 ± 0.06 |" in en
    found = lab_pair_problems(en.replace("| sandwich | 6.64 ± 0.06 |", "| sandwich | 6.65 ± 0.06 |"), zh)
    assert len(found) == 1 and "The extrapolation lab" in found[0] and "numbers differ" in found[0], found
    assert "sections" in lab_pair_problems(en + "\n## One more section\n\nText.\n", zh)[0]
    wrong = zh.replace("](../../results/)", "](../results/)", 1)
    assert any("link targets" in p for p in lab_pair_problems(en, wrong))


def test_every_chinese_page_cites_the_chinese_lab_page() -> None:
    """README.zh-CN.md, docs/zh/ and the Chinese notebooks (11 and 12 cite the lab's page) name docs/zh/lab.md,
    never the English docs/lab.md (the build writes a translation's `docs/lab.md` as `docs/zh/lab.md`)."""
    import json

    pages = {
        p.relative_to(ROOT): p.read_text(encoding="utf-8")
        for p in [ROOT / "README.zh-CN.md", *(ROOT / "docs" / "zh").glob("*.md")]
    }
    for path in sorted((ROOT / "notebooks" / "zh").glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        pages[path.relative_to(ROOT)] = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    cited = {str(p) for p, text in pages.items() if "docs/zh/lab.md" in text or "](lab.md)" in text}
    english = [
        f"{p}: {m.group(0)!r}"
        for p, text in pages.items()
        for m in re.finditer(r"(?<!zh/)(?<!\w)docs/lab\.md|\]\(\.\./(?:\.\./)?docs/lab\.md", text)
    ]
    assert not english, "\n".join(english)
    assert {
        "notebooks/zh/11_extending_a_trained_model.ipynb",
        "notebooks/zh/12_position_from_the_data.ipynb",
    } <= cited, cited


def lab_json_table(results: dict) -> list[str]:
    """docs/lab.md's first table written from results/lab.json's per-seed records, not from its summary: per scheme
    the mean and sample standard deviation over every seed at 1×, 8× and 16× L_train, and the growth 8× / 1× of the
    means; sorted by the mean at 8×, the schemes not defined there last."""
    import statistics

    rows = []
    for scheme, seeds in results["runs"].items():
        per_length = [[seeds[k]["ppl"][L] for k in seeds] for L in ("64", "512", "1024")]
        cells = [None if None in v else (statistics.mean(v), statistics.stdev(v)) for v in per_length]
        rows.append((scheme, cells))
    rows.sort(key=lambda r: (r[1][1] is None, r[1][1][0] if r[1][1] else 0.0))
    lines = []
    for scheme, cells in rows:
        text = ["not defined" if c is None else f"{c[0]:.2f} ± {c[1]:.2f}" for c in cells]
        growth = "—" if cells[1] is None else f"{cells[1][0] / cells[0][0]:.2f}"
        lines.append(f"| {scheme} | " + " | ".join(text) + f" | {growth} |")
    return lines


def test_the_lab_pages_first_table_is_lab_json_over_all_its_seeds() -> None:
    import json

    results = json.loads((ROOT / "results" / "lab.json").read_text(encoding="utf-8"))
    n_seeds = len(results["config"]["train"]["seeds"])
    assert all(len(seeds) == n_seeds for seeds in results["runs"].values())
    rows = lab_json_table(results)
    en, zh = (LAB[k].read_text(encoding="utf-8") for k in ("en", "zh"))
    assert "\n".join(rows) in en, "docs/lab.md's first table is not results/lab.json:\n" + "\n".join(rows)
    assert "\n".join(r.replace("not defined", "无定义") for r in rows) in zh
    words = {3: ("three", "三"), 8: ("eight", "八")}[n_seeds]  # the prose names the seed count the table has
    assert f"Mean ± standard deviation over the {words[0]}\nseeds" in en and f"下表是{words[1]}个种子的均值" in zh
    # the check can fail: the table of the file's first three seeds (its state before seeds 3-7) is not the page's
    first3 = {**results, "runs": {s: {k: r[k] for k in "012"} for s, r in results["runs"].items()}}
    assert "\n".join(lab_json_table(first3)) not in en
