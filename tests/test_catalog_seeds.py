"""The catalog against the seed files it was transcribed from.

The seeds (../shared/seeds/*.txt beside the repo) are parsed here independently of the catalog:
each task id line, then its "Proposed partial credit" line, split into "NN% label" shares. A share
may be split into points, either "width (15 pts) and hard end (10 pts)" or "six shots on brand
(10 points each)"; the catalog then holds one check per point item, each with `group` set to the
share's label without the point annotations. Everything else is matched by order: the catalog
lists checks in the seed's order. A transcription slip in a weight, an id or a title fails here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from verifiers.catalog import CatalogError, load_catalog, parse_catalog_file

REPO_ROOT = Path(__file__).resolve().parents[1]
SEEDS_DIR = REPO_ROOT.parent / "shared" / "seeds"
CATALOG_DIR = REPO_ROOT / "verifiers" / "catalog"
FAMILY_OF_PREFIX = {
    "R06.12.01.01": "streaming",
    "R06.07.01.03": "sound",
    "R06.04.02.02": "grading",
    "R06.04.01.04": "shortform",
}

_TASK_LINE = re.compile(r"^(R06\.\d\d\.\d\d\.\d\d-T\d\d) (.+?)\s*$")
_SHARE = re.compile(r"^(\d+(?:\.\d+)?)%\s+(.+)$")
_PTS = re.compile(r"\((\d+(?:\.\d+)?) pts\)")
_EACH = re.compile(r"\((\d+(?:\.\d+)?) points each\)")


@dataclass(frozen=True)
class Share:
    """One "NN% label" share; `points` is its finer split when the seed gives one."""

    weight: float
    label: str  # without point annotations; what a split share's checks carry as `group`
    points: tuple[float, ...] = ()


@dataclass(frozen=True)
class SeedTask:
    id: str
    title: str
    shares: tuple[Share, ...]
    seed_file: str


def parse_share(text: str) -> Share:
    """Parse one share such as "25% width (15 pts) and hard end (10 pts)"."""
    m = _SHARE.match(text.strip())
    if not m:
        raise ValueError(f"not a 'NN% label' share: {text!r}")
    weight, label = float(m.group(1)), m.group(2).strip()
    pts = [float(p) for p in _PTS.findall(label)]
    each = _EACH.search(label)
    if pts and each:
        raise ValueError(f"share mixes 'pts' and 'points each': {text!r}")
    points: tuple[float, ...] = ()
    if pts:
        points = tuple(pts)
    elif each:
        per_item = float(each.group(1))
        n_items = weight / per_item
        if n_items != int(n_items):
            raise ValueError(f"{weight:g}% is not a whole number of {per_item:g}-point items: {text!r}")
        points = (per_item,) * int(n_items)
    if points and sum(points) != weight:
        raise ValueError(f"points {points} do not add up to {weight:g}%: {text!r}")
    clean = re.sub(r"\s+", " ", _EACH.sub("", _PTS.sub("", label))).strip()
    return Share(weight=weight, label=clean, points=points)


def parse_partial_credit(line: str) -> tuple[Share, ...]:
    body = line.strip().rstrip(".").strip()
    return tuple(parse_share(part) for part in body.split(";") if part.strip())


def parse_seed(path: Path) -> list[SeedTask]:
    """Every task of one seed file: id, title and its partial-credit shares."""
    lines = path.read_text(encoding="utf-8").splitlines()
    tasks: list[SeedTask] = []
    i = 0
    while i < len(lines):
        m = _TASK_LINE.match(lines[i])
        if not m:
            i += 1
            continue
        tid, title = m.group(1), m.group(2)
        j = i + 1
        while j < len(lines) and lines[j].strip() != "Proposed partial credit":
            if _TASK_LINE.match(lines[j]):
                raise AssertionError(f"{path.name}: {tid} has no 'Proposed partial credit' line")
            j += 1
        if j + 1 >= len(lines):
            raise AssertionError(f"{path.name}: {tid} has no 'Proposed partial credit' line")
        tasks.append(SeedTask(tid, title, parse_partial_credit(lines[j + 1]), path.name))
        i = j + 2
    return tasks


@pytest.fixture(scope="module")
def seed_files() -> list[Path]:
    if not SEEDS_DIR.is_dir():
        pytest.fail(f"seed folder {SEEDS_DIR} is missing: the catalog is checked against ../shared/seeds "
                    "beside the repo (copy shared/ next to the clone)")
    files = sorted(SEEDS_DIR.glob("*.txt"))
    if len(files) != 4:
        pytest.fail(f"expected 4 seed files in {SEEDS_DIR}, found {[f.name for f in files]}")
    return files


@pytest.fixture(scope="module")
def seed_tasks(seed_files: list[Path]) -> dict[str, SeedTask]:
    out: dict[str, SeedTask] = {}
    for f in seed_files:
        for t in parse_seed(f):
            assert t.id not in out, f"{t.id} appears twice in the seeds"
            out[t.id] = t
    return out


# --- the seed parser itself -------------------------------------------------------------------

def test_parse_share_forms() -> None:
    assert parse_share("60% sync within 1 frame (scaled per event)") == Share(60, "sync within 1 frame (scaled per event)")
    assert parse_share("25% width (15 pts) and hard end (10 pts)") == Share(25, "width and hard end", (15, 10))
    assert parse_share("60% six shots on brand (10 points each)") == Share(60, "six shots on brand", (10,) * 6)
    assert parse_share("40% B-roll timing (10 points each)").points == (10, 10, 10, 10)
    with pytest.raises(ValueError, match="do not add up"):
        parse_share("25% width (15 pts) and hard end (5 pts)")
    with pytest.raises(ValueError, match="whole number"):
        parse_share("45% notes (10 points each)")
    with pytest.raises(ValueError, match="NN% label"):
        parse_share("about half sync")


def test_every_seed_share_line_sums_to_100(seed_tasks: dict[str, SeedTask]) -> None:
    bad = {t.id: sum(s.weight for s in t.shares) for t in seed_tasks.values()
           if sum(s.weight for s in t.shares) != 100}
    assert not bad, f"seed partial-credit lines not summing to 100: {bad}"


# --- the catalog against the seeds -------------------------------------------------------------

def test_eighty_tasks_twenty_per_family(seed_tasks: dict[str, SeedTask]) -> None:
    cat = load_catalog()
    assert len(seed_tasks) == 80
    assert len(cat) == 80
    for prefix, family in FAMILY_OF_PREFIX.items():
        in_seed = sorted(t for t in seed_tasks if t.startswith(prefix))
        in_cat = sorted(t.id for t in cat.family(family))
        assert len(in_seed) == 20, f"{family}: seed has {len(in_seed)} tasks"
        assert in_cat == in_seed, f"{family}: catalog ids differ from the seed's"


def test_ids_titles_and_families_match(seed_tasks: dict[str, SeedTask]) -> None:
    cat = load_catalog()
    assert set(cat.tasks) == set(seed_tasks)
    for tid, seed in seed_tasks.items():
        spec = cat.get(tid)
        assert spec.title == seed.title, f"{tid}: title {spec.title!r} != seed {seed.title!r}"
        assert spec.family == FAMILY_OF_PREFIX[tid.split("-")[0]], f"{tid}: family {spec.family}"


def test_catalog_files_name_their_seed(seed_tasks: dict[str, SeedTask]) -> None:
    for path in sorted(CATALOG_DIR.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        ids = {t["id"] for t in data["tasks"]}
        seeds = {seed_tasks[i].seed_file for i in ids}
        assert seeds == {data["seed"]}, f"{path.name}: names seed {data['seed']}, tasks come from {seeds}"
        first_line = (SEEDS_DIR / data["seed"]).read_text(encoding="utf-8").splitlines()[0].strip()
        assert data["title"] == first_line, f"{path.name}: title {data['title']!r} != seed {first_line!r}"


def _expected_checks(seed: SeedTask) -> list[tuple[float, str | None]]:
    """(weight, group) per check, in order, as the seed's split asks."""
    out: list[tuple[float, str | None]] = []
    for share in seed.shares:
        if share.points:
            out.extend((p, share.label) for p in share.points)
        else:
            out.append((share.weight, None))
    return out


def test_check_weights_match_seed_split(seed_tasks: dict[str, SeedTask]) -> None:
    cat = load_catalog()
    problems = []
    for tid, seed in sorted(seed_tasks.items()):
        spec = cat.get(tid)
        got = [(c.weight, c.group) for c in spec.checks]
        want = _expected_checks(seed)
        if got != want:
            problems.append(f"{tid}: catalog {got} != seed {want} "
                            f"({'; '.join(f'{s.weight:g}% {s.label}' for s in seed.shares)})")
        if sum(c.weight for c in spec.checks) != 100:
            problems.append(f"{tid}: weights sum to {sum(c.weight for c in spec.checks)}")
    assert not problems, "\n".join(problems)


def test_split_shares_are_recorded_with_groups(seed_tasks: dict[str, SeedTask]) -> None:
    """Each split share is one run of checks sharing one group; groups never span two shares."""
    cat = load_catalog()
    n_split = 0
    for tid, seed in seed_tasks.items():
        groups = [c.group for c in cat.get(tid).checks if c.group]
        for share in seed.shares:
            if share.points:
                n_split += 1
                assert groups.count(share.label) == len(share.points), f"{tid}: group {share.label!r}"
    # T05, T13, T19 (sound); T12, T20 (grading); T08, T19 (shortform)
    assert n_split == 7


def test_artifact_and_input_paths_are_work_dir_relative() -> None:
    for t in load_catalog():
        for p in [a.path for a in t.artifacts] + list(t.inputs):
            assert not p.startswith("/") and ".." not in Path(p).parts, f"{t.id}: {p}"
            assert not p.startswith("gt/"), f"{t.id}: {p} points into the hidden GT dir"


# --- the loader's validation ------------------------------------------------------------------

_GOOD = """
family: sound
seed: x.txt
title: x
tasks:
  - id: R06.07.01.03-T99
    title: probe
    checks:
      - {name: a, weight: 60}
      - {name: b, weight: 40}
"""


def test_loader_accepts_a_valid_entry() -> None:
    [t] = parse_catalog_file(_GOOD, "probe.yaml")
    assert [(c.name, c.weight) for c in t.checks] == [("a", 60.0), ("b", 40.0)]


def test_loader_rejects_unknown_task_key() -> None:
    text = _GOOD.replace("    title: probe\n", "    title: probe\n    weigths: 3\n")
    with pytest.raises(CatalogError) as exc:
        parse_catalog_file(text, "probe.yaml")
    msg = str(exc.value)
    assert "probe.yaml" in msg and "R06.07.01.03-T99" in msg and "weigths" in msg


def test_loader_rejects_unknown_check_key() -> None:
    text = _GOOD.replace("{name: a, weight: 60}", "{name: a, weight: 60, treshold: 3}")
    with pytest.raises(CatalogError) as exc:
        parse_catalog_file(text, "probe.yaml")
    msg = str(exc.value)
    assert "probe.yaml" in msg and "R06.07.01.03-T99" in msg and "treshold" in msg


def test_loader_rejects_bad_weight_sum() -> None:
    text = _GOOD.replace("weight: 40", "weight: 35")
    with pytest.raises(CatalogError) as exc:
        parse_catalog_file(text, "probe.yaml")
    msg = str(exc.value)
    assert "probe.yaml" in msg and "R06.07.01.03-T99" in msg and "95" in msg
