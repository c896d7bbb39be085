"""GPU datasheet figures, shared by the config (which checks a hardware name) and the cost model
(which turns FLOPs and bytes into time). Its own module so neither imports the other for it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True, frozen=True)
class HardwareProfile:
    """Datasheet figures: dense bf16 tensor FLOP/s, HBM bandwidth, host link, memory."""

    name: str
    peak_flops: float  # FLOP/s
    hbm_bandwidth: float  # bytes/s
    host_bandwidth: float  # bytes/s between device and host (swap), PCIe
    memory_bytes: float

    def __post_init__(self) -> None:
        for name in ("peak_flops", "hbm_bandwidth", "host_bandwidth", "memory_bytes"):
            if not getattr(self, name) > 0:
                raise ValueError(f"HardwareProfile.{name} must be > 0")


HARDWARE: dict[str, HardwareProfile] = {  # name -> profile
    "A10G": HardwareProfile("A10G", 70e12, 600e9, 25e9, 24e9),
    "A100": HardwareProfile("A100", 312e12, 2.039e12, 25e9, 80e9),  # SXM, 80 GB
    "H100": HardwareProfile("H100", 989e12, 3.35e12, 50e9, 80e9),  # SXM
    "H200": HardwareProfile("H200", 989e12, 4.8e12, 50e9, 141e9),
}
