"""Per-core timelines (`ktir.sim.timeline`): a unit's busy time is the union of its work."""

from __future__ import annotations

import numpy as np

from ktir.sim.timeline import Timeline, covered


def test_covered_is_the_length_of_the_union() -> None:
    spans = [(np.array([0.0, 5.0]), np.array([4.0, 5.0])), (np.array([2.0, 1.0]), np.array([6.0, 2.0]))]
    spans.append((np.array([8.0, 0.0]), np.array([9.0, 3.0])))
    np.testing.assert_array_equal(covered(spans, 2), [7.0, 3.0])  # [0, 6) + [8, 9); [0, 3)
    np.testing.assert_array_equal(covered([], 3), [0.0, 0.0, 0.0])


def test_a_load_and_a_store_at_once_keep_the_dma_unit_busy_once() -> None:
    """
    A load and a store issued together, each a 500-cycle setup and 30 cycles of the channel:
    the load works [0, 530), the store [0, 500) and [530, 560). The DMA unit is busy 560
    cycles, not 1,060; the SFU (one queue) adds its ops.
    """
    line = Timeline(cores=2, start=0.0)
    setup = np.array([500.0, 500.0])
    line.transfer("load", [], [("x", 0)], setup, 30.0, "load")
    line.transfer("store", [("y", 0)], [], setup, 30.0, "store")
    line.issue("sfu", [("x", 0)], [("z", 0)], np.array([10.0, 20.0]), "exp")
    line.issue("sfu", [("z", 0)], [("w", 0)], np.array([5.0, 5.0]), "exp")
    np.testing.assert_array_equal(line.busy["dma"], [560.0, 560.0])
    np.testing.assert_array_equal(line.busy["sfu"], [15.0, 25.0])
    assert line.end == 560.0
