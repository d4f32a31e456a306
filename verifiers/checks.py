"""A scorer as declared checks: `@check` methods, cached `@provides` inputs, one small result each.

    N = check_names(TASK)                # the catalog's check names as attributes (typo: error at import)

    class WeeklyStreamGui(CheckedTask):   # naming its task_id registers it as that task's scorer
        task_id = TASK

        @provides
        def coll(self) -> Collection:     # computed once, on first use; its exception is cached too
            return load_named_collection(self.ctx, W.COLLECTION)

        @check(N.cam_geometry)
        def cam_geometry(self, p: CamGeometry, curve: Curve) -> Result:
            err = ...                     # measure (p is the typed params, curve the catalog's curve)
            return Result(curve.score(err, p.tolerance_px), {"max_err_px": err}, "")

Why: one exception used to end every later check of a procedural `score()`, so scorers guarded
each block by hand. Here every check runs on its own: an `AgentOutputError` (raised by the check or
by a provider it uses) fails exactly that check, `GTError`/`NoLiveEvidence` make it `error`, any
other exception is a verifier bug and makes only that check `error` ("verifier crashed: ...").
At class creation the decorated names must equal the catalog's check names, every check must
declare its curve, and every check with params must have a params dataclass.

`CheckedTask` is a `TaskVerifier`: `score(ctx, checks)` runs the declared checks, so the
registry, scoring.py and the self-test treat converted and unconverted tasks alike.
"""

from __future__ import annotations

import functools
import keyword
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from verifiers.base import AgentOutputError, Checks, GTError, NoLiveEvidence, ScoreContext, TaskVerifier
from verifiers.catalog import CheckSpec, load_catalog
from verifiers.curves import Curve
from verifiers.evidence.base import EvidenceError
from verifiers.measure.safe_io import UnsafeFile
from verifiers.params import NoParams
from verifiers.registry import register


class RegistrationError(TypeError):
    """A CheckedTask does not match its catalog entry (names, curves, params types)."""


class CheckName(str):
    """A catalog check name, obtained from `check_names(task)`; a plain str everywhere else."""


class CheckNames:
    """The check names of one task as attributes: `N.cam_geometry`; an unknown name fails at import.
    A name that is a Python keyword gets a trailing underscore (`N.import_` is check "import")."""

    def __init__(self, task_id: str, names: tuple[str, ...]) -> None:
        self._task_id = task_id
        self._names = names
        for n in names:
            object.__setattr__(self, f"{n}_" if keyword.iskeyword(n) else n, CheckName(n))

    def __getattr__(self, name: str) -> CheckName:
        raise AttributeError(f"{self._task_id} has no check {name!r} in the catalog "
                             f"(its checks: {', '.join(self._names)})")

    def __iter__(self):
        return iter(CheckName(n) for n in self._names)


def check_names(task_id: str) -> CheckNames:
    task = load_catalog().get(task_id)
    return CheckNames(task_id, tuple(c.name for c in task.checks))


@dataclass(frozen=True)
class Result:
    """What one check says: a 0..1 score (the curve's output), its evidence, a message for people."""

    score: float
    evidence: dict[str, Any] = field(default_factory=dict)
    message: str = ""
    error: bool = False  # True: the verifier could not judge (status error; score ignored)

    @classmethod
    def fail(cls, message: str, evidence: dict[str, Any] | None = None) -> Result:
        return cls(0.0, evidence or {}, message)

    @classmethod
    def cannot_judge(cls, message: str, evidence: dict[str, Any] | None = None) -> Result:
        return cls(0.0, evidence or {}, message, error=True)


CheckFn = Callable[[Any, Any, Curve], "Result | tuple"]


def check(name: str) -> Callable[[CheckFn], CheckFn]:
    """Method decorator: this method judges catalog check `name` (use `N.<name>`, not a literal)."""
    def deco(fn: CheckFn) -> CheckFn:
        fn.__tally_check__ = str(name)  # type: ignore[attr-defined]
        return fn
    return deco


def unit_checks(judge: Callable[[Any, int, Any, Curve], Result], *names: str) -> tuple[CheckFn, ...]:
    """Checks `names`, one per numbered unit (shot_1 … shot_6), all judged by `judge(self, k, p, curve)`
    with k the unit's 1-based position; in a class body, with the judge defined above it:

        shot_1, shot_2, shot_3 = unit_checks(on_shot, N.shot_1, N.shot_2, N.shot_3)

    Why: a per-unit share is one measurement applied to each unit; one judge, not a method per unit."""
    def one(k: int, name: str) -> CheckFn:
        @check(name)
        def judged(self: Any, p: Any, curve: Curve) -> Result:
            return judge(self, k, p, curve)

        judged.__name__ = judged.__qualname__ = str(name)
        return judged

    return tuple(one(k, name) for k, name in enumerate(names, start=1))


class _Failed:
    """A provider's cached exception: re-raised to every check that uses it."""

    __slots__ = ("exc",)

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


def provides(fn: Callable[[Any], Any]) -> property:
    """Cached input for checks: computed on first use per scoring; its exception is cached as well,
    so a missing or bad input fails (or errors) exactly the checks that read it, each with its message."""
    key = fn.__name__

    @functools.wraps(fn)
    def get(self: CheckedTask) -> Any:
        cache = self._provided
        if key not in cache:
            try:
                cache[key] = fn(self)
            except Exception as exc:
                cache[key] = _Failed(exc)
        got = cache[key]
        if isinstance(got, _Failed):
            raise got.exc
        return got

    return property(get)


class _Loaded:
    """What `loads` returns: on class creation it becomes a `@provides` property under its attribute's
    name (the cache key, so two attributes using one loader do not share a value)."""

    def __init__(self, loader: Callable[..., Any], inputs: tuple[str, ...], after: tuple[str, ...]) -> None:
        self.loader, self.inputs, self.after = loader, inputs, after

    def __set_name__(self, owner: type, name: str) -> None:
        loader, inputs, after = self.loader, self.inputs, self.after

        def get(task: CheckedTask) -> Any:
            for dep in after:
                getattr(task, dep)
            return loader(task.ctx, *(getattr(task, dep) for dep in inputs))

        get.__name__ = get.__qualname__ = name
        get.__doc__ = loader.__doc__
        setattr(owner, name, provides(get))


def loads(loader: Callable[..., Any], *inputs: str, after: tuple[str, ...] = ()) -> Any:
    """A `@provides` input that is `loader(ctx, *providers)`: the common provider that reads the GT
    file or the render from the run (`gt = loads(load_passby_gt)`, `render = loads(find_beds, "gt")`),
    written once here instead of a three-line method per task. `inputs` name the providers passed
    after ctx; `after` names providers read first, so that (say) a malformed GT is the error every
    check reports rather than the render that depends on it. Cached under the attribute's name, like
    `@provides` under the method's."""
    return _Loaded(loader, inputs, after)


class CheckedTask(TaskVerifier):
    """A task scorer made of `@check` methods; see the module docstring."""

    _check_methods: ClassVar[dict[str, str]]

    def __init__(self, task: Any) -> None:
        super().__init__(task)
        self._provided: dict[str, Any] = {}
        self._ctx: ScoreContext | None = None

    @property
    def ctx(self) -> ScoreContext:
        if self._ctx is None:
            raise RuntimeError("ctx is only set while score() runs")
        return self._ctx

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        methods: dict[str, str] = {}
        for klass in reversed(cls.__mro__):
            for attr, val in vars(klass).items():
                name = getattr(val, "__tally_check__", None)
                if name is not None:
                    if name in methods and methods[name] != attr:
                        raise RegistrationError(f"{cls.__name__}: check {name!r} decorated twice "
                                                f"({methods[name]} and {attr})")
                    methods[name] = attr
        cls._check_methods = methods
        if "task_id" in vars(cls):
            validate_against_catalog(cls)
            # a class naming its task is that task's scorer: the registry's index finds scorers in the
            # sources by this same rule, so a separate @register could only fall out of step with it
            register(cls)

    def score(self, ctx: ScoreContext, checks: Checks) -> None:
        self._ctx, self._provided = ctx, {}
        try:
            for spec in self.task.checks:
                run_check(self, spec, checks)
            self.after_checks(checks)
        finally:
            self._ctx, self._provided = None, {}

    def after_checks(self, checks: Checks) -> None:
        """A family policy applied once every check has run, with the providers still cached (grading's
        baseline-relative preservation scales its preserve checks here); nothing by default."""


def run_check(task: CheckedTask, spec: CheckSpec, checks: Checks) -> None:
    """Run one check in isolation and record its result (never raises for the check's own faults)."""
    fn = getattr(task, type(task)._check_methods[spec.name])
    try:
        res = fn(spec.typed if spec.typed is not None else NoParams(), spec.curve)
        if isinstance(res, tuple):
            res = Result(*res)
    except AgentOutputError as exc:
        checks.fail(spec.name, str(exc))
        return
    except (GTError, NoLiveEvidence) as exc:
        checks.error(spec.name, str(exc))
        return
    except EvidenceError as exc:  # a recorded payload does not fit its type: tally's producer, not the agent
        checks.error(spec.name, f"unreadable live evidence: {exc}")
        return
    except UnsafeFile as exc:  # the safe opener refused an agent file this check reached for
        checks.fail(spec.name, f"refused agent file: {exc}")
        return
    except RecursionError:  # what an agent wrote is nested too deeply: the agent's failure (scoring.py's rule)
        checks.fail(spec.name, "an agent file is nested too deeply to score (RecursionError): the agent's failure")
        return
    except MemoryError:
        checks.fail(spec.name, "an agent file is too large to score (MemoryError): the agent's failure")
        return
    except Exception as exc:  # a verifier bug: this check could not be judged; the others run on
        where = traceback.extract_tb(exc.__traceback__)[-1]
        checks.error(spec.name, f"verifier crashed: {type(exc).__name__}: {exc} "
                                f"(at {where.filename.rsplit('/', 1)[-1]}:{where.lineno})")
        return
    if res.error:
        checks.error(spec.name, res.message, res.evidence)
    else:
        checks.set(spec.name, res.score, res.evidence, res.message)


def validate_against_catalog(cls: type[CheckedTask]) -> None:
    """Decorated names == catalog names; every check declares a curve and, with params, a params type."""
    task = load_catalog().get(cls.task_id)
    want = [c.name for c in task.checks]
    got = sorted(cls._check_methods)
    if sorted(want) != got:
        raise RegistrationError(
            f"{cls.__name__} ({cls.task_id}): @check names {got} do not match the catalog's checks "
            f"{sorted(want)} (missing: {sorted(set(want) - set(got))}, not in catalog: {sorted(set(got) - set(want))})")
    for c in task.checks:
        if c.curve.kind == "inline":
            raise RegistrationError(f"{cls.__name__} ({cls.task_id}): check {c.name!r} declares no curve "
                                    "in the catalog (curve: {kind: ...}, see docs/catalog.md)")
        if c.params and c.typed is None:
            raise RegistrationError(f"{cls.__name__} ({cls.task_id}): check {c.name!r} has params but no "
                                    "params dataclass (verifiers/paramtypes/<family>.py, @params_type)")

