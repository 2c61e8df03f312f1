"""The `ktir` dialect assembled from its modules (the package docstring lists them)."""

from xdsl.ir import Dialect

from ktir.dialects.ktir.attributes import ATTRIBUTES
from ktir.dialects.ktir.collective import COLLECTIVE_OPS
from ktir.dialects.ktir.core import CORE_OPS
from ktir.dialects.ktir.data import DATA_OPS
from ktir.dialects.ktir.elementwise import ELEMENTWISE_OPS
from ktir.dialects.ktir.kernel_plan import PLAN_ATTRIBUTES
from ktir.dialects.ktir.routing import ROUTING_OPS
from ktir.dialects.ktir.structured import STRUCTURED_OPS

Ktir = Dialect(
    "ktir",
    [*ELEMENTWISE_OPS, *STRUCTURED_OPS, *DATA_OPS, *ROUTING_OPS, *COLLECTIVE_OPS, *CORE_OPS],
    [*ATTRIBUTES, *PLAN_ATTRIBUTES],
)
"""The `ktir` dialect: the `#ktir.tiled` encoding, the graph-level ops and the core-level ops."""

__all__ = ["Ktir"]
