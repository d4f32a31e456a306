"""The streaming scorer's two usual inputs, provided once: the task's GT file and the OBS scene
collection its checks read.

Most streaming scorers start the same way: the GT file the instance wrote (an error when it is
missing: nothing can be judged) and the collection that holds the scene the task names (or the one
OBS saved under the task's collection name). A task declares which with class attributes; a task
whose GT names the collection (T19's brief) overrides `named_collection`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from verifiers.apps.obs.collection import Collection
from verifiers.checks import CheckedTask, provides
from verifiers.gtfiles import GTFile
from verifiers.tasks.streaming._shared.obs_config import collection_with, load_named_collection


class ObsTask(CheckedTask):
    """A streaming scorer reading one GT file (`gt_file`) and one OBS collection: the one holding
    scene `collection_scene`, or the one saved as `collection_name`."""

    gt_file: ClassVar[type[GTFile] | None] = None
    collection_scene: ClassVar[str | None] = None
    collection_name: ClassVar[str | None] = None

    @provides
    def gt(self) -> Any:
        """The task's GT file, typed (a GTError, so every check that reads it errors, when absent)."""
        if self.gt_file is None:
            raise RuntimeError(f"{type(self).__name__} declares no gt_file")
        return self.ctx.gt_typed(self.gt_file)

    @provides
    def coll(self) -> Collection:
        """The task's collection (an agent-output failure when there is none or it is unreadable).
        A task with a GT file reads it first: without GT nothing is judged (error), not failed."""
        if self.gt_file is not None:
            self.gt  # noqa: B018 - raises the GTError
        name = self.named_collection()
        if name is not None:
            return load_named_collection(self.ctx, name)
        return collection_with(self.ctx, scene=self.collection_scene)

    def named_collection(self) -> str | None:
        """The name OBS saved the task's collection under: `collection_name` (None: found by its
        scene); a task whose GT names the collection returns that."""
        return self.collection_name
