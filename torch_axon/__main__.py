"""``python -m torch_axon``: the same as ``axon-smi`` (torch_axon/smi/)."""

import sys

from .smi.cli import main

sys.exit(main())
