"""One scorer per task id, found by importing every module under verifiers.tasks.

A task without a registered scorer is listed as not implemented and can never pass.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil

from verifiers.base import TaskVerifier

_REGISTRY: dict[str, type[TaskVerifier]] = {}


def register(cls: type[TaskVerifier]) -> type[TaskVerifier]:
    """Class decorator: make `cls` the scorer of `cls.task_id`."""
    tid = cls.task_id
    if tid in _REGISTRY and _REGISTRY[tid] is not cls:
        raise RuntimeError(f"two verifiers registered for {tid}: {_REGISTRY[tid].__name__} and {cls.__name__}")
    _REGISTRY[tid] = cls
    return cls


@functools.cache
def _discover() -> None:
    import verifiers.tasks as pkg

    for mod in pkgutil.walk_packages(pkg.__path__, prefix="verifiers.tasks."):
        importlib.import_module(mod.name)


def verifier_class(task_id: str) -> type[TaskVerifier] | None:
    _discover()
    return _REGISTRY.get(task_id)


def implemented_ids() -> set[str]:
    _discover()
    return set(_REGISTRY)
