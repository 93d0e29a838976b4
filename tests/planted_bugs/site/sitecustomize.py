"""Plants the bug named by $POSLIB_PLANT_BUG in every Python process started with this folder on PYTHONPATH."""

import os
import sys

_name = os.environ.get("POSLIB_PLANT_BUG")
if _name:
    # tests/ is a plain folder, not an installed package: make `planted_bugs` importable from here.
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    from planted_bugs import plant

    plant(_name)
