"""
The public model configs in `bench/configs/` (docs/deploying.md) and `bench/deploy_bench.py`:
every config loads, its weights match the published parameter count, it fits one card at batch 1
and context 2048 (Llama-3-70B does not, with the numbers), and the bench's rows say what is and
is not timed. Nothing here compiles a model (the bench's estimates take minutes).
"""

from __future__ import annotations

import importlib.util
import io
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from ktir.llm.capacity import MemoryModel
from ktir.llm.estimate import EstimateError, estimate_llm
from ktir.tools.ktir_estimate import read_config

BENCH = Path(__file__).parents[3] / "bench"
CONFIGS = sorted((BENCH / "configs").glob("*.json"))

PUBLISHED_PARAMETERS = {
    "ministral-8b": 8_019_808_256,  # the Ministral-8B-Instruct-2410 model card's "Parameters"
    "llama-3.1-8b": 8_030_261_248,  # Llama-3.1-8B's safetensors, as Llama-3-8B's
    "llama-3-70b": 70_553_706_496,  # Meta-Llama-3-70B's safetensors
    "mistral-small-24b": 23_572_403_200,  # Mistral-Small-24B-Instruct-2501's safetensors
    "qwen2.5-vl-7b-text": 7_615_616_512,  # Qwen2-7B's: the same decoder shape
}
"""Parameters of the new configs' models: fp16 weights on one card are twice these (every dim is
a multiple of 64, so no stick padding)."""


def test_every_config_is_listed_with_its_source() -> None:
    """bench/configs/README.md names the source of every config it holds."""
    readme = (BENCH / "configs" / "README.md").read_text(encoding="utf-8")
    for path in CONFIGS:
        assert f"`{path.name}`" in readme, path.name


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_config_fits_one_card_at_batch_1(path: Path) -> None:
    """Each config loads and fits one card at context 2048, batch 1; Llama-3-70B fails with the numbers."""
    config = read_config(str(path))
    memory = MemoryModel(config)
    if path.stem in PUBLISHED_PARAMETERS:
        assert memory.weights(1) == 2 * PUBLISHED_PARAMETERS[path.stem]
    card = memory.per_card(context=2048, batch=1, prompt=512)
    if path.stem != "llama-3-70b":
        assert card.fits, card.describe()
        return
    assert not card.fits
    with pytest.raises(EstimateError, match=r"does not fit on spyre: needs 142\.3 GiB per card, has 128 GiB"):
        estimate_llm(config, prompt=512, context=2048)  # raises before anything is compiled


def test_deploy_bench_help() -> None:
    """`bench/deploy_bench.py --help` runs and offers `--quick`."""
    result = subprocess.run(
        [sys.executable, str(BENCH / "deploy_bench.py"), "--help"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "--quick" in result.stdout


def _bench():
    spec = importlib.util.spec_from_file_location("deploy_bench", BENCH / "deploy_bench.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("deploy_bench", module)  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_deploy_bench_rows_without_time() -> None:
    """A point that does not fit gets the memory and no time (nothing compiled)."""
    bench = _bench()
    rows = [bench.measure(bench.Point("llama-3-70b", "fp16", 1, 1, 2048))]
    assert [r["estimate"] for r in rows] == [None]
    assert [r["memory"].fits for r in rows] == [False]
    out = io.StringIO()
    Console(file=out, width=400).print(bench.table(rows))
    text = out.getvalue()
    assert "NO: 142.4 / 128.0" in text and "no time: does not fit" in text
