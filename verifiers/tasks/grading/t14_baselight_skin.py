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
from pathlib import Path

import numpy as np

from verifiers.base import AgentOutputError, Checks, GTError, ScoreContext
from verifiers.measure.colour import delta_e2000, rgb_to_lab
from verifiers.measure.errors import MediaError, describe
from verifiers.registry import register
from verifiers.synth import InstanceWriter
from verifiers.synthkit import grading as g
from verifiers.tasks.grading.common import (
    CHANGE_MIN_DE,
    DE_STRIDE,
    IDENTITY_MIN_CORR,
    GradingVerifier,
    outside_grade_writes,
    structure_corr,
)

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


@register
class BaselightSkin(GradingVerifier):
    task_id = "R06.04.02.02-T14"
    #: scaled by the share of shots whose lead skin changed (≥ CHANGE_MIN_DE mean ΔE2000; EXR is exact)
    preserves = ("crowd_unchanged", "blg_layers")

    def grade(self, ctx: ScoreContext, checks: Checks) -> None:
        self._blg(ctx, checks)
        try:
            with np.load(ctx.gt_path("masks.npz")) as z:
                masks = {k: z[k].astype(bool) for k in z.files}
        except (OSError, ValueError) as exc:
            raise GTError(f"GT masks unreadable: {exc}") from None
        folder = ctx.artifact(EXR_DIR)
        files = shot_files(folder)
        missing = [s for s in SHOTS if s not in files]
        if missing:
            raise AgentOutputError(f"{EXR_DIR}: no EXR for shot(s) {missing}")
        p_lead, p_crowd = checks.params("lead_skin_warmed"), checks.params("crowd_unchanged")
        lead_ok, lead_ev, crowd_de, present = [], {}, [], []
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
            lead, crowd = masks["lead_skin"][i], masks["crowd"][i]
            corr = min(structure_corr(src[..., 0], o[..., 0]) for o in outs)
            if corr < IDENTITY_MIN_CORR:
                raise AgentOutputError(f"{EXR_DIR}: shot {s} is not derived from the given shot (high-passed L* "
                                       f"correlation {corr:.2f} < {IDENTITY_MIN_CORR})")
            lidx = np.flatnonzero(lead)[::DE_STRIDE]
            present.append(min(float(delta_e2000(src.reshape(-1, 3)[lidx], o.reshape(-1, 3)[lidx]).mean())
                               for o in outs) >= CHANGE_MIN_DE)
            db = float(np.mean([o[lead][:, 2].mean() - src[lead][:, 2].mean() for o in outs]))
            dl = float(np.mean([o[lead][:, 0].mean() - src[lead][:, 0].mean() for o in outs]))
            ok = p_lead["min_b_shift"] <= db <= p_lead["max_b_shift"] and abs(dl) <= p_lead["max_l_change"]
            lead_ok.append(ok)
            lead_ev[f"shot_{s}"] = {"b_shift": db, "l_change": dl}
            idx = np.flatnonzero(crowd)[::DE_STRIDE]
            crowd_de.append(max(float(delta_e2000(src.reshape(-1, 3)[idx], o.reshape(-1, 3)[idx]).mean()) for o in outs))
        self._present = np.array(present)
        failed = [s for s, ok in zip(SHOTS, lead_ok, strict=True) if not ok]
        checks.set("lead_skin_warmed", float(np.mean(lead_ok)), lead_ev,
                   "" if not failed else f"lead skin not warmed within range on shot(s) {failed}")
        bad = [s for s, d in zip(SHOTS, crowd_de, strict=True) if d > p_crowd["max_delta_e2000"]]
        checks.set("crowd_unchanged", 0.0 if bad else 1.0,
                   {"mean_delta_e2000_by_shot": dict(zip(map(str, SHOTS), crowd_de, strict=True)),
                    "pixel_stride": DE_STRIDE},
                   "" if not bad else f"crowd skin changed on shot(s) {bad}")

    def _blg(self, ctx: ScoreContext, checks: Checks) -> None:
        bad = outside_grade_writes(ctx)
        if bad:
            checks.fail("blg_layers", f"grade file written outside Baselight: {bad[0]} (audit)", {"outside_writes": bad})
            return
        folder = ctx.workdir / BLG_DIR
        blgs = sorted(folder.glob("*.blg")) if folder.is_dir() else []
        if not blgs:
            checks.fail("blg_layers", f"no BLG files in {BLG_DIR}/")
            return
        found = {"hueangle": 0, "shape": 0}
        for p in blgs:
            head = p.read_bytes()[:HEADER_BYTES].lower().replace(b" ", b"")
            for tok in found:
                found[tok] += tok.encode() in head
        ok = all(found.values())
        checks.set("blg_layers", 1.0 if ok else 0.0, {"files": len(blgs), "files_with": found,
                                                        "audit": "not recorded" if ctx.events is None else "checked"},
                   "" if ok else f"BLGs lack {[k for k, v in found.items() if not v]} layers")

    def build(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        shots, masks = make_shots(rng)
        for s, img in shots.items():
            write_exr(inst.gt / "source_exr" / f"shot_{s}.exr", img)
        g.write_masks(inst.gt / "masks.npz", masks)
        inst.write_json(inst.gt / "shots.json", {"shots": SHOTS})
        (inst.workdir / "out" / "exr").mkdir(parents=True, exist_ok=True)

        def render(folder: Path, db: float = 4.0, dl: float = 0.0, region: str = "lead", skip: int | None = None) -> None:
            for i, s in enumerate(SHOTS):
                lab = linear_to_lab(shots[s])
                m = masks["lead_skin"][i] | (masks["crowd"][i] if region == "all_skin" else False)
                if s != skip:
                    lab[..., 2] = np.where(m, lab[..., 2] + db, lab[..., 2])
                    lab[..., 0] = np.where(m, lab[..., 0] + dl, lab[..., 0])
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

        m = inst.mutant("hueangle_without_shape", ["crowd_unchanged", "blg_layers"],
                        "HueAngle keyed all skin, no Shape to isolate the lead: the crowd warms too")
        render(m, region="all_skin")
        blgs(m, ("HueAngle",))

        m = inst.mutant("shot_4_skipped", ["lead_skin_warmed", "crowd_unchanged", "blg_layers"],
                        "shot 4 left ungraded (preservation shares are credited for the 3 graded shots of 4)")
        render(m, skip=4)
        blgs(m)

        m = inst.mutant("warm_and_bright", ["lead_skin_warmed"], "skin warmed but also lifted 4 L*")
        render(m, dl=4.0)
        blgs(m)

        # gaming baselines (issue 21): the ungraded EXRs handed back, with and without the BLGs
        files = [(f"{EXR_DIR}/Harbor_Sc_shot_{s}.exr", f"copy:gt/source_exr/shot_{s}.exr") for s in SHOTS]
        inst.baseline_case("unedited_copy", files, why="the source EXRs handed back")
        inst.baseline_case("unedited_with_blgs", files + [(f"{BLG_DIR}/Harbor_Sc_shot_{s}.blg",
                                                           f"copy:oracle/{BLG_DIR}/Harbor_Sc_shot_{s}.blg")
                                                          for s in SHOTS],
                           why="BLGs with the right layers but the pictures not graded")
