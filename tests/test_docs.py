"""The documentation (issue 31): a README that starts with the user, four guides in docs/ (the finance lead's in
English and Chinese), screenshots made by a script, and no link that leads nowhere."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
GUIDES = ("finance-guide.md", "finance-guide.zh.md", "architect-guide.md", "cost-model.md", "operations.md")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    return {slug(line.lstrip("#")) for line in path.read_text().splitlines() if line.startswith("#")}


def test_the_readme_is_short_and_shows_the_app():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 200
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert images == ["docs/img/planner.png", "docs/img/programme.png"]
    for image in images:
        assert (ROOT / image).stat().st_size > 50_000  # a real screenshot, not a placeholder
    # the two commands, then the questions a user comes with
    assert "make app" in text and "make test" in text
    assert text.index("## Two commands") < text.index("## How do I") < text.index("## Documentation")


def test_every_guide_exists_and_every_link_leads_somewhere():
    for name in GUIDES:
        assert (DOCS / name).stat().st_size > 3_000, name
    for path in [ROOT / "README.md", *(DOCS / name for name in GUIDES)]:
        for target in LINK.findall(path.read_text()):
            if target.startswith(("http://", "https://")):
                continue
            file, _, anchor = target.partition("#")
            where = (path.parent / file).resolve() if file else path
            assert where.exists(), f"{path.name}: {target}"
            if anchor:
                assert anchor in anchors(where), f"{path.name}: {target}"


def test_the_chinese_guide_is_the_english_one_in_chinese():
    english = (DOCS / "finance-guide.md").read_text()
    chinese = (DOCS / "finance-guide.zh.md").read_text()
    # the same sections and the same glossary terms
    assert len(re.findall(r"^## ", english, re.M)) == len(re.findall(r"^## ", chinese, re.M)) == 6
    assert english.count("\n| ") == chinese.count("\n| ")
    assert len(re.findall(r"[\u4e00-\u9fff]", chinese)) > 2_000


def test_the_screenshots_are_made_by_a_script_from_the_running_app():
    script = (DOCS / "screenshots.py").read_text()
    for image in ("planner.png", "programme.png", "planner-zh.png", "programme-zh.png"):
        assert f'"{image}"' in script and (DOCS / "img" / image).exists()
    assert "workbench.app.serve" in script and "chromium" in script
