"""GPU datasheet figures, shared by the config (which checks a hardware name) and the cost model
(which turns FLOPs and bytes into time). Its own module so neither imports the other for it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True, frozen=True)
class HardwareProfile:
    """Datasheet figures: dense bf16 tensor FLOP/s, HBM bandwidth, host link, memory; the link
    between two GPUs of one server (a kata/engine/parallel.py INTERCONNECTS name) and an on-demand
    price per GPU-hour in dollars, which turns a serving plan's GPU time into its cost."""

    name: str
    peak_flops: float  # FLOP/s
    hbm_bandwidth: float  # bytes/s
    host_bandwidth: float  # bytes/s between device and host (swap), PCIe
    memory_bytes: float
    gpu_link: str = "nvlink"  # how two GPUs of one server talk (tensor parallelism)
    price_per_hour: float = 1.0  # dollars per GPU-hour

    def __post_init__(self) -> None:
        for name in ("peak_flops", "hbm_bandwidth", "host_bandwidth", "memory_bytes",
                     "price_per_hour"):
            if not getattr(self, name) > 0:
                raise ValueError(f"HardwareProfile.{name} must be > 0")


# The A10G (a PCIe card, as in a g5 server) has no NVLink: its tensor-parallel all-reduces cross
# PCIe. Prices are round on-demand figures per GPU-hour, the same for every plan the workbook judges.
HARDWARE: dict[str, HardwareProfile] = {  # name -> profile
    "A10G": HardwareProfile("A10G", 70e12, 600e9, 25e9, 24e9, "pcie", 1.0),
    "A100": HardwareProfile("A100", 312e12, 2.039e12, 25e9, 80e9, "nvlink", 3.0),  # SXM, 80 GB
    "H100": HardwareProfile("H100", 989e12, 3.35e12, 50e9, 80e9, "nvlink", 4.0),  # SXM
    "H200": HardwareProfile("H200", 989e12, 4.8e12, 50e9, 141e9, "nvlink", 5.0),
}
