"""The club feed marks a table whose referee stopped (issue 16): a real Mosquitto broker, the table's bus and the
dashboard's listener; the fault reaches the dashboard as the table's status and as an event, in structured form."""

from __future__ import annotations

from pathlib import Path

from test_club import table_on_bus

from controller.referee.journal import JournalError
from harness.broker import Mosquitto, wait_for
from web_referee.club import ClubState


def test_a_stopped_referee_is_marked_on_the_club_feed(broker: Mosquitto, dashboard: ClubState, tmp_path: Path) -> None:  # noqa: F811
    g, bus = table_on_bus(tmp_path, "t1", broker, seed=4)
    try:
        sup = g.table.supervise()
        wait_for(lambda: (dashboard.table("t1") or {}).get("status") is not None, timeout=10, what="the table's status")
        assert dashboard.table("t1")["status"]["fault"] is None
        sup.fail(JournalError("disk full"), "journal")
        wait_for(lambda: ((dashboard.table("t1") or {}).get("status") or {}).get("fault") is not None, timeout=10,
                 what="the fault in the table's status")
        fault = dashboard.table("t1")["status"]["fault"]
        assert dashboard.table("t1")["status"]["link"]["status"] == "connected"
        assert fault["say"] == {"code": "fault.stopped", "params": {"why": {"code": "fault.journal", "params": {}}}}
        wait_for(lambda: any(e.get("event") == "fault" for e in dashboard.table("t1")["events"]), timeout=10,
                 what="the fault event")
    finally:
        bus.stop()
