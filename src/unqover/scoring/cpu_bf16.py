"""Whether ``--dtype bfloat16`` pays on this CPU: its bf16 features and a short measured matrix product.

A CPU with bf16 matrix units (AMX tiles, AVX-512 BF16) runs a linear layer's product in bfloat16 several times
faster than in float32; one without them (AVX2 only) emulates bf16 and runs it tens of times slower, so a
``--dtype bfloat16`` run there takes several times the time of an fp32 one. Before a CPU run in bf16 loads its
model, :func:`warn_slow_bfloat16` times one product of a projection's shape in both dtypes (well under a second,
once per process) and warns in one line, with the measured ratio, when bf16 would be the slower; the run goes on
(the user asked for bf16, and its numbers are valid). GPU runs and fp32 runs never measure anything.
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from unqover.format import fmt_significant

#: the product timed: 128 token rows through a 576 -> 1,536 projection (SmolLM2-135M's feed-forward shape)
SHAPE = (128, 576, 1536)
#: seconds the two dtypes' products are timed for, taking turns (at least :data:`ROUNDS` turns each)
BUDGET_SECONDS = 0.25
ROUNDS = 1


@dataclass(frozen=True)
class Bf16Speed:
    """What this CPU offers bf16: torch's capability (``AVX2``, ``AVX512``, ...), the bf16 matrix units torch
    reports, the cores torch uses, and the GFLOP/s of one measured product in float32 and in bfloat16."""

    capability: str
    units: tuple[str, ...]
    threads: int
    fp32_gflops: float
    bf16_gflops: float

    @property
    def ratio(self) -> float:
        """bf16's speed over fp32's: below 1, bf16 is the slower."""
        return self.bf16_gflops / self.fp32_gflops

    def features(self) -> str:
        """The CPU's features in words: ``AVX512, bf16 units: AVX-512 BF16, 2 threads``."""
        units = f"bf16 units: {', '.join(self.units)}" if self.units else "no bf16 matrix units"
        return f"{self.capability}, {units}, {self.threads} threads"


def bf16_units() -> tuple[str, ...]:
    """The bf16 matrix units torch finds on this CPU (AMX tiles, AVX-512 BF16), from its support flags where
    this torch has them."""
    import torch

    flags = (("AMX", "_is_amx_tile_supported"), ("AVX-512 BF16", "_is_avx512_bf16_supported"))
    return tuple(name for name, flag in flags if getattr(torch.cpu, flag, lambda: False)())


def _gflops() -> tuple[float, float]:
    """GFLOP/s of the fastest float32 and the fastest bfloat16 product of :data:`SHAPE`, timed in turns (so that
    other work on a shared machine slows both alike) for :data:`BUDGET_SECONDS`."""
    import torch

    rows, inner, outer = SHAPE
    generator = torch.Generator().manual_seed(0)
    a = torch.randn(rows, inner, generator=generator)
    b = torch.randn(inner, outer, generator=generator)
    pairs = ((a, b), (a.to(torch.bfloat16), b.to(torch.bfloat16)))
    best = [float("inf"), float("inf")]
    started = time.perf_counter()
    with torch.inference_mode():
        for x, y in pairs:
            x @ y  # first call: kernel selection and allocation
        turns = 0
        while turns < ROUNDS or time.perf_counter() - started < BUDGET_SECONDS:
            for k, (x, y) in enumerate(pairs):
                began = time.perf_counter()
                x @ y
                best[k] = min(best[k], time.perf_counter() - began)
            turns += 1
    flop = 2 * rows * inner * outer / 1e9
    return flop / max(best[0], 1e-9), flop / max(best[1], 1e-9)


@functools.cache
def measure() -> Bf16Speed:
    """This CPU's bf16 speed against fp32 (measured once per process)."""
    import torch

    fp32, bf16 = _gflops()
    return Bf16Speed(
        torch.backends.cpu.get_cpu_capability(), bf16_units(), torch.get_num_threads(), fp32, bf16
    )


def slow_bfloat16_line(speed: Bf16Speed) -> str | None:
    """The warning a CPU run in bf16 prints where bf16 is the slower (None where it is not)."""
    if speed.ratio >= 1:
        return None
    ratio, bf16, fp32 = (
        fmt_significant(speed.ratio, 2),
        fmt_significant(speed.bf16_gflops),
        fmt_significant(speed.fp32_gflops),
    )
    return (
        f"unqover: warning: --dtype bfloat16 is slower than float32 on this CPU ({speed.features()}): a bf16 "
        f"matrix product ran at {ratio}x the speed of float32 here ({bf16} against {fp32} GFLOP/s, measured just "
        "now); leave --dtype out for float32, the reference and the faster here"
    )


def warn_slow_bfloat16(
    dtype: str, device: str, measured: Callable[[], Bf16Speed] | None = None
) -> Bf16Speed | None:
    """Before a model loads: on a CPU run in bf16 (``device`` as given, ``auto`` resolved), measure bf16 against
    fp32 (``measured``, default :func:`measure`) and warn on stderr where bf16 is the slower; the measurement, or
    None where none ran."""
    if dtype != "bfloat16":
        return None
    from unqover.scoring.models import choose_device

    if choose_device(device) != "cpu":
        return None
    speed = (measured or measure)()
    line = slow_bfloat16_line(speed)
    if line is not None and line not in _SAID:  # once a process: a sweep's models share the CPU
        _SAID.add(line)
        print(line, file=sys.stderr, flush=True)
    return speed


#: the warnings printed in this process
_SAID: set[str] = set()
