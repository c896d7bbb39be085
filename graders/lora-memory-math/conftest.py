"""Loads the suite's shared helpers, lora_memory_math_oracle.py, under that module name."""

from kata.checks import load_helpers

load_helpers(__file__, "lora_memory_math_oracle")
