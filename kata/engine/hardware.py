"""GPU datasheet figures, shared by the config (which checks a hardware name) and the cost model
(which turns FLOPs and bytes into time). Its own module so neither imports the other for it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True, frozen=True)
class HardwareProfile:
    """Datasheet figures: dense bf16 tensor FLOP/s, HBM bandwidth, host link; the memory the
    driver reports (what a serving engine takes its share of, not the marketed GB); the link
    between two GPUs of one server (a kata/engine/parallel.py INTERCONNECTS name) and, for
    NVLink, the card's own NVLink bandwidth; an on-demand price per GPU-hour in dollars, which
    turns a serving plan's GPU time into its cost. docs/ENGINE.md ("GPUs") names each source."""

    name: str
    peak_flops: float  # FLOP/s
    hbm_bandwidth: float  # bytes/s
    host_bandwidth: float  # bytes/s between device and host (swap), PCIe
    memory_bytes: float  # as the driver reports it
    gpu_link: str = "nvlink"  # how two GPUs of one server talk (tensor parallelism)
    price_per_hour: float = 1.0  # dollars per GPU-hour
    nvlink_bandwidth: float | None = None  # bytes/s each way between two GPUs; None: no NVLink

    def __post_init__(self) -> None:
        for name in ("peak_flops", "hbm_bandwidth", "host_bandwidth", "memory_bytes",
                     "price_per_hour"):
            if not getattr(self, name) > 0:
                raise ValueError(f"HardwareProfile.{name} must be > 0")
        if self.nvlink_bandwidth is not None and not self.nvlink_bandwidth > 0:
            raise ValueError("HardwareProfile.nvlink_bandwidth must be > 0 (or None: no NVLink)")


# The A10G (a PCIe card, as in a g5 server) has no NVLink: its tensor-parallel all-reduces cross
# PCIe. Memory as the driver reports it: A100 80 GB 81,920 MiB, H100 80 GB 81,559 MiB, H200
# 143,771 MiB. NVLink each way: NVLink 3 (A100) 300 GB/s of its 600 total, NVLink 4 (H100, H200)
# 450 of 900. Prices are round on-demand figures per GPU-hour, the same for every plan judged.
HARDWARE: dict[str, HardwareProfile] = {  # name -> profile
    "A10G": HardwareProfile("A10G", 70e12, 600e9, 25e9, 24e9, "pcie", 1.0),
    "A100": HardwareProfile("A100", 312e12, 2.039e12, 25e9, 85_899_345_920, "nvlink", 3.0,
                            300e9),  # SXM4 80 GB
    "H100": HardwareProfile("H100", 989e12, 3.35e12, 50e9, 85_520_809_984, "nvlink", 4.0,
                            450e9),  # SXM5 80 GB
    "H200": HardwareProfile("H200", 989e12, 4.8e12, 50e9, 150_754_820_096, "nvlink", 5.0,
                            450e9),  # SXM 141 GB
}
