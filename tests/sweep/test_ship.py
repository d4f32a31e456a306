"""`--ship`: an item's files packed for Ray's object store and unpacked elsewhere score to the same
row as read in place (paths written back as on the driver). Ray itself is not needed for this."""

from __future__ import annotations

from monitor.sweep.items import Item
from monitor.sweep.results import stable
from monitor.sweep.worker import item_key, pack_item, score_item


def test_shipped_items_score_like_items_read_in_place(workdirs):
    specs = [s for s in workdirs if s["solution"] in ("oracle", "nothing")][:4]
    for s in specs:
        item = Item(id=s["workdir"], kind="spec", task=s["task"], workdir=s["workdir"], gt=s["gt"],
                    events=s.get("events"), labels={"agent": "x"})
        key = item_key(item)
        here = score_item(item.to_dict(), key)
        shipped = score_item(item.to_dict(), key, shipped=pack_item(item))
        assert here["status"] == "scored"
        assert stable(shipped) == stable(here)
        assert shipped["report"] == here["report"]
