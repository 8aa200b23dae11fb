"""A small fitted logistic model over named features, as ``spans.json`` stores it.

The span ranker (:mod:`._ranking`) and the narrower (:mod:`._narrowing`) are each one: a bias,
one coefficient per feature over the feature standardised by its mean and deviation, and the
probability a sentence or a word must reach to be kept (``cut``). Each subclass names its
features; a file fitted on other features is refused.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

__all__ = ["FittedLogistic"]

_Self = TypeVar("_Self", bound="FittedLogistic")


@dataclass(frozen=True)
class FittedLogistic:
    """A fitted logistic model over :attr:`FEATURES` and its ``cut``."""

    FEATURES: ClassVar[tuple[str, ...]] = ()

    bias: float
    coef: tuple[float, ...]
    mu: tuple[float, ...]
    sd: tuple[float, ...]
    cut: float

    @classmethod
    def from_json(cls: type[_Self], data: Mapping[str, Any]) -> _Self:
        if tuple(data["features"]) != cls.FEATURES:
            raise ValueError(f"fitted on {data['features']}, not {list(cls.FEATURES)}")
        coef, mu, sd = (tuple(float(v) for v in data[k]) for k in ("coef", "mu", "sd"))
        if not len(coef) == len(mu) == len(sd) == len(cls.FEATURES):
            raise ValueError("coef, mu and sd must each have one number a feature")
        if any(not v > 0 for v in sd):
            raise ValueError("each deviation must be positive")
        return cls(float(data["bias"]), coef, mu, sd, float(data["cut"]))

    def to_json(self) -> dict[str, Any]:
        return {
            "features": list(self.FEATURES),
            "bias": self.bias,
            "coef": list(self.coef),
            "mu": list(self.mu),
            "sd": list(self.sd),
            "cut": self.cut,
        }

    def probability(self, vector: Sequence[float]) -> float:
        z = self.bias + sum(
            c * (v - m) / s for c, v, m, s in zip(self.coef, vector, self.mu, self.sd)
        )
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))

    def probabilities(self, vectors: Sequence[Sequence[float]]) -> list[float]:
        return [self.probability(v) for v in vectors]
