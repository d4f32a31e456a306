"""R06.04.02.02-T14: warm the lead's skin with Baselight HueAngle + Shapes across shots 2–5.

Renders: out/exr/ — one EXR per shot whose name carries the shot number (`shot_2.exr`,
`Harbor_Sc_sh03.exr`, …; an image sequence per shot is also accepted). BLGs: out/blg/*.blg.
GT: gt/source_exr/shot_<k>.exr (the ungraded shots, linear light) and gt/masks.npz {lead_skin,
crowd} with one frame per shot in the order of gt/shots.json. EXR pixels are scene-linear RGB: they
are clipped to [0, 1] and sRGB-encoded before CIELAB, per pixel. Lead skin: per shot, mean b* shift
2–6 with |ΔL*| ≤ 2; the check scores the share of the four shots that pass. Crowd: per shot mean
ΔE2000 ≤ 1.5 (all shots). BLG layers: Baselight's BLG is an OpenEXR container whose header
carries the grade; without a published layout the reader looks for the operator names (HueAngle,
Shape) in the file's header bytes — the synthetic BLGs in the self-test are stand-ins, not Baselight
exports.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from verifiers.base import AgentOutputError, GTError
from verifiers.checks import Result, check, check_names, provides
from verifiers.curves import Curve
from verifiers.measure.colour import delta_e2000, rgb_to_lab
from verifiers.measure.errors import MediaError, describe
from verifiers.params import NoParams
from verifiers.paramtypes.grading import LeadWarmed, MaxDeltaE
from verifiers.provenance import outside_app_writes
from verifiers.synth import InstanceWriter
from verifiers.synthkit import grading as g
from verifiers.tasks.grading._shared.identity import IDENTITY_MIN_CORR, structure_corr
from verifiers.tasks.grading._shared.preservation import CHANGE_MIN_DE, GradingTask
from verifiers.tasks.grading._shared.shot import DE_STRIDE

EXR_DIR = "out/exr"
BLG_DIR = "out/blg"
SHOTS = [2, 3, 4, 5]
_SHOT_RE = re.compile(r"(?:shot|sh)[ _-]?0*(\d+)", re.I)
HEADER_BYTES = 1 << 16


def read_exr(path: Path) -> np.ndarray:
    """First image of an EXR as (h, w, 3) float32 linear RGB."""
    import av

    try:
        with av.open(str(path)) as c:
            for frame in c.decode(video=0):
                arr = frame.reformat(format="gbrpf32le").to_ndarray()
                return np.asarray(arr, dtype=np.float32)[..., :3]
    except (av.error.FFmpegError, ValueError) as exc:
        raise MediaError(f"{path.name}: not a readable EXR ({describe(exc)})") from None
    raise MediaError(f"{path.name}: no image in the EXR")


def write_exr(path: Path, rgb: np.ndarray) -> Path:
    import av

    path.parent.mkdir(parents=True, exist_ok=True)
    h, w = rgb.shape[:2]
    with av.open(str(path), "w", format="image2") as c:
        s = c.add_stream("exr", rate=1)
        s.width, s.height, s.pix_fmt = w, h, "gbrpf32le"
        for pkt in s.encode(av.VideoFrame.from_ndarray(np.ascontiguousarray(rgb, dtype=np.float32), format="gbrpf32le")):
            c.mux(pkt)
        for pkt in s.encode():
            c.mux(pkt)
    return path


def linear_to_lab(rgb: np.ndarray) -> np.ndarray:
    lin = np.clip(rgb.astype(np.float64), 0.0, 1.0)
    enc = np.where(lin <= 0.0031308, lin * 12.92, 1.055 * lin ** (1 / 2.4) - 0.055)
    return rgb_to_lab(enc)


def lab_to_linear(lab: np.ndarray) -> np.ndarray:
    from skimage.color import lab2rgb

    enc = np.clip(lab2rgb(lab), 0, 1)
    return np.where(enc <= 0.04045, enc / 12.92, ((enc + 0.055) / 1.055) ** 2.4).astype(np.float32)


def l_lift_for_de(lab_px: np.ndarray, target_de2000: float) -> float:
    """The L* lift whose mean ΔE2000 over these (k, 3) Lab pixels is `target_de2000` (bisection; float
    EXR pixels, no rounding): a region moved just that much, for the crowd's near-miss pair."""
    lo, hi = 0.0, 8.0
    for _ in range(30):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if float(delta_e2000(lab_px, lab_px + np.array([mid, 0.0, 0.0])).mean()) < target_de2000 else (lo, mid)
    return (lo + hi) / 2


def shot_files(folder: Path) -> dict[int, list[Path]]:
    out: dict[int, list[Path]] = {}
    for p in sorted(folder.glob("*.exr")):
        m = _SHOT_RE.search(p.stem)
        if m:
            out.setdefault(int(m.group(1)), []).append(p)
    return out


def make_shots(rng: np.random.Generator) -> tuple[dict[int, np.ndarray], dict[str, np.ndarray]]:
    n = len(SHOTS)
    lab = g.flat(n, (45, -2, -6))  # harbour, overcast
    lab[..., 0] += 12 * g.texture(rng, n, sigma_px=4)
    lead = g.ellipse(n, np.c_[np.linspace(90, 150, n), np.full(n, 60)], (20, 26))
    crowd = np.zeros_like(lead)
    for k in range(n):
        for cx in (30, 200, 235):
            crowd[k] |= g.ellipse(1, np.array([[cx - 6 * k, 80]]), (12, 15))[0]
    crowd &= ~lead
    lab[lead] = (60, 13, 15)
    lab[crowd] = (58, 12, 16)  # same skin tones: a global HueAngle would hit them too
    lab[..., 0][lead | crowd] += 3 * g.texture(rng, n, sigma_px=2)[lead | crowd]
    lin = lab_to_linear(lab)
    return {s: lin[i] for i, s in enumerate(SHOTS)}, {"lead_skin": lead, "crowd": crowd}


TASK = "R06.04.02.02-T14"
N = check_names(TASK)


@dataclass(frozen=True)
class ExrShot:
    """One graded shot: the GT source and every render of it (an image sequence: several), CIELAB."""

    shot: int
    src: np.ndarray
    outs: list[np.ndarray]
    lead: np.ndarray
    crowd: np.ndarray

    def mean_de(self, mask: np.ndarray, out: np.ndarray) -> float:
        idx = np.flatnonzero(mask)[::DE_STRIDE]
        return float(delta_e2000(self.src.reshape(-1, 3)[idx], out.reshape(-1, 3)[idx]).mean())


def load_exr_shots(ctx: Any) -> list[ExrShot]:
    """GT masks and source EXRs, the agent's EXR per shot; the content-identity gate per shot (rule 2)."""
    try:
        with np.load(ctx.gt_path("masks.npz")) as z:
            masks = {k: z[k].astype(bool) for k in z.files}
    except (OSError, ValueError) as exc:
        raise GTError(f"GT masks unreadable: {exc}") from None
    files = shot_files(ctx.artifact(EXR_DIR))
    missing = [s for s in SHOTS if s not in files]
    if missing:
        raise AgentOutputError(f"{EXR_DIR}: no EXR for shot(s) {missing}")
    shots = []
    for i, s in enumerate(SHOTS):
        try:
            src = linear_to_lab(read_exr(ctx.gt_path(f"source_exr/shot_{s}.exr")))
        except MediaError as exc:
            raise GTError(f"GT source unusable: {exc}") from None
        try:
            outs = [linear_to_lab(read_exr(p)) for p in files[s]]
        except MediaError as exc:
            raise AgentOutputError(f"{EXR_DIR}: {exc}") from None
        if any(o.shape != src.shape for o in outs):
            raise AgentOutputError(f"shot {s}: EXR size differs from the shot's {src.shape[1]}x{src.shape[0]}")
        corr = min(structure_corr(src[..., 0], o[..., 0]) for o in outs)
        if corr < IDENTITY_MIN_CORR:
            raise AgentOutputError(f"{EXR_DIR}: shot {s} is not derived from the given shot (high-passed L* "
                                   f"correlation {corr:.2f} < {IDENTITY_MIN_CORR})")
        shots.append(ExrShot(s, src, outs, masks["lead_skin"][i], masks["crowd"][i]))
    return shots


class BaselightSkin(GradingTask):
    task_id = TASK
    #: scaled by the share of shots whose lead skin changed (≥ CHANGE_MIN_DE mean ΔE2000; EXR is exact)
    preserves = (N.crowd_unchanged, N.blg_layers)

    @provides
    def exrs(self) -> list[ExrShot]:
        return load_exr_shots(self.ctx)

    def presence(self) -> tuple[np.ndarray, dict[str, Any]]:
        present = np.array([min(x.mean_de(x.lead, o) for o in x.outs) >= CHANGE_MIN_DE for x in self.exrs])
        return present, {"primary_change_units_pct": 100.0 * float(np.mean(present))}

    @check(N.lead_skin_warmed)
    def lead_skin_warmed(self, p: LeadWarmed, curve: Curve) -> Result:
        ok, ev = [], {}
        for x in self.exrs:
            db = float(np.mean([o[x.lead][:, 2].mean() - x.src[x.lead][:, 2].mean() for o in x.outs]))
            dl = float(np.mean([o[x.lead][:, 0].mean() - x.src[x.lead][:, 0].mean() for o in x.outs]))
            ok.append(p.min_b_shift_lab <= db <= p.max_b_shift_lab and abs(dl) <= p.max_l_change_lab)
            ev[f"shot_{x.shot}"] = {"b_shift": db, "l_change": dl}
        failed = [s for s, good in zip(SHOTS, ok, strict=True) if not good]
        return Result(curve.count(ok), ev, "" if not failed else f"lead skin not warmed within range on shot(s) {failed}")

    @check(N.crowd_unchanged)
    def crowd_unchanged(self, p: MaxDeltaE, curve: Curve) -> Result:
        crowd_de = [max(x.mean_de(x.crowd, o) for o in x.outs) for x in self.exrs]
        bad = [s for s, d in zip(SHOTS, crowd_de, strict=True) if d > p.max_de2000]
        return Result(curve.passes(not bad), {"mean_delta_e2000_by_shot": dict(zip(map(str, SHOTS), crowd_de, strict=True)),
                                              "pixel_stride": DE_STRIDE},
                      "" if not bad else f"crowd skin changed on shot(s) {bad}")

    @check(N.blg_layers)
    def blg_layers(self, p: NoParams, curve: Curve) -> Result:
        bad = outside_app_writes(self.ctx)
        if bad:
            return Result(curve.passes(False), {"outside_writes": bad}, f"grade file written outside Baselight: {bad[0]} (audit)")
        folder = self.ctx.workdir / BLG_DIR
        blgs = sorted(folder.glob("*.blg")) if folder.is_dir() else []
        if not blgs:
            return Result(curve.passes(False), {}, f"no BLG files in {BLG_DIR}/")
        found = {"hueangle": 0, "shape": 0}
        for path in blgs:
            head = path.read_bytes()[:HEADER_BYTES].lower().replace(b" ", b"")
            for tok in found:
                found[tok] += tok.encode() in head
        ok = all(found.values())
        return Result(curve.passes(ok), {"files": len(blgs), "files_with": found,
                                         "audit": "not recorded" if self.ctx.events is None else "checked"},
                      "" if ok else f"BLGs lack {[k for k, v in found.items() if not v]} layers")

    def build(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        shots, masks = make_shots(rng)
        for s, img in shots.items():
            write_exr(inst.gt / "source_exr" / f"shot_{s}.exr", img)
        g.write_masks(inst.gt / "masks.npz", masks)
        inst.write_json(inst.gt / "shots.json", {"shots": SHOTS})
        (inst.workdir / "out" / "exr").mkdir(parents=True, exist_ok=True)

        def render(folder: Path, db: float = 4.0, dl: float = 0.0, region: str = "lead", skip: int | None = None,
                   crowd_de: float = 0.0) -> None:
            for i, s in enumerate(SHOTS):
                lab = linear_to_lab(shots[s])
                m = masks["lead_skin"][i] | (masks["crowd"][i] if region == "all_skin" else False)
                if s != skip:
                    lab[..., 2] = np.where(m, lab[..., 2] + db, lab[..., 2])
                    lab[..., 0] = np.where(m, lab[..., 0] + dl, lab[..., 0])
                if crowd_de:
                    crowd = masks["crowd"][i]
                    lab[..., 0][crowd] += l_lift_for_de(lab[crowd], crowd_de)
                    m = m | crowd
                out = shots[s].copy()
                out[m] = lab_to_linear(lab)[m]
                write_exr(folder / EXR_DIR / f"Harbor_Sc_shot_{s}.exr", out)

        def blgs(folder: Path, layers: tuple[str, ...] = ("HueAngle", "Shape")) -> None:
            for s in SHOTS:
                p = folder / BLG_DIR / f"Harbor_Sc_shot_{s}.blg"
                p.parent.mkdir(parents=True, exist_ok=True)
                header = b"v/1\x01\x02\x00\x00\x00" + b"".join(
                    f"layer{i}\x00string\x00{name} operator\x00".encode() for i, name in enumerate(layers))
                p.write_bytes(header + b"\x00")

        render(inst.oracle)
        blgs(inst.oracle)

        m = inst.mutant("hueangle_without_shape", [N.crowd_unchanged, N.blg_layers],
                        "HueAngle keyed all skin, no Shape to isolate the lead: the crowd warms too")
        render(m, region="all_skin")
        blgs(m, ("HueAngle",))

        m = inst.mutant("shot_4_skipped", [N.lead_skin_warmed, N.crowd_unchanged, N.blg_layers],
                        "shot 4 left ungraded (preservation shares are credited for the 3 graded shots of 4)")
        render(m, skip=4)
        blgs(m)

        m = inst.mutant("warm_and_bright", [N.lead_skin_warmed], "skin warmed but also lifted 4 L*")
        render(m, dl=4.0)
        blgs(m)

        # near misses at the seed's lines, each pair on every shot: lead skin b* +2 … +6 (+5.7 passes, +6.3 fails),
        # its |ΔL*| ≤ 2 with b* +4 as the oracle (1.8 passes, 2.2 fails), the crowd's mean ΔE2000 ≤ 1.5 (1.3 / 1.7)
        for name, lowers, why, change in (
                ("near_miss_warm_inside", [], "lead skin b* +5.7: just inside the +6 edge", {"db": 5.7}),
                ("near_miss_warm_outside", [N.lead_skin_warmed], "lead skin b* +6.3: just outside +6", {"db": 6.3}),
                ("near_miss_lift_inside", [], "lead skin warmed and lifted 1.8 L*: just inside the 2 L* edge", {"dl": 1.8}),
                ("near_miss_lift_outside", [N.lead_skin_warmed], "lifted 2.2 L*: just outside the 2 L* edge", {"dl": 2.2}),
                ("near_miss_crowd_inside", [], "crowd skin moved mean ΔE2000 1.3: just inside the 1.5 line",
                 {"crowd_de": 1.3}),
                ("near_miss_crowd_outside", [N.crowd_unchanged], "crowd moved 1.7: just outside 1.5", {"crowd_de": 1.7})):
            m = inst.mutant(name, lowers, why)
            render(m, **change)
            blgs(m)

        # gaming baselines (issue 21): the ungraded EXRs handed back, with and without the BLGs
        files = [(f"{EXR_DIR}/Harbor_Sc_shot_{s}.exr", f"copy:gt/source_exr/shot_{s}.exr") for s in SHOTS]
        inst.baseline_case("unedited_copy", files, why="the source EXRs handed back")
        inst.baseline_case("unedited_with_blgs", files + [(f"{BLG_DIR}/Harbor_Sc_shot_{s}.blg",
                                                           f"copy:oracle/{BLG_DIR}/Harbor_Sc_shot_{s}.blg")
                                                          for s in SHOTS],
                           why="BLGs with the right layers but the pictures not graded")
