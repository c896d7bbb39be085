"""Loads the suite's shared helpers, kv_block_store_oracle.py, under that module name.

Done here, by path, so that the test files can import from it whatever pytest's import mode
(prepend puts this folder on sys.path; importlib does not).
"""

import importlib.util
import sys
from pathlib import Path

_NAME = "kv_block_store_oracle"

if _NAME not in sys.modules:
    _spec = importlib.util.spec_from_file_location(_NAME, Path(__file__).with_name(f"{_NAME}.py"))
    _module = importlib.util.module_from_spec(_spec)
    sys.modules[_NAME] = _module
    _spec.loader.exec_module(_module)
