#!/usr/bin/env bash
# Builds Axon's wheel (pip wheel --no-build-isolation .) and checks it the way a user would get
# it: a fresh virtual environment with the pinned torch and nothing else of Axon's, the wheel
# installed with its declared dependencies, then `import torch` from outside the source tree
# (the torch.backends entry point must load Axon by itself), a computation on the device
# compared with the CPU, and the axon-smi console script. Needs the system OpenCL packages
# (make deps). Usage: scripts/check_wheel.sh [WORKDIR]  (default: a new temporary folder)
set -euo pipefail
cd "$(dirname "$0")/.."
work="${1:-$(mktemp -d)}"
mkdir -p "$work"
PYTHON="${PYTHON:-python3}"

# ccache's compilers first, as make build does: an unchanged tree rebuilds in seconds.
PATH=/usr/lib/ccache:$PATH MAX_JOBS=2 TORCH_DEVICE_BACKEND_AUTOLOAD=0 CCACHE_NOHASHDIR=true CCACHE_BASEDIR="$PWD" \
	"$PYTHON" -m pip wheel -q --no-build-isolation --no-deps -w "$work/dist" .
wheel=$(ls "$work"/dist/torch_axon-*.whl)
echo "built $wheel ($(du -h "$wheel" | cut -f1))"

"$PYTHON" -m venv "$work/venv"
"$work/venv/bin/pip" install -q torch==2.13.0 numpy
"$work/venv/bin/pip" install -q "$wheel"

cd "$work"  # away from the source tree: nothing may be imported from it
"$work/venv/bin/python" - <<'PY'
import torch

assert torch.accelerator.current_accelerator().type == "axon", "autoload did not register axon"
import torch_axon

assert "site-packages" in torch_axon.__file__, torch_axon.__file__
x = torch.randn(1000, generator=torch.Generator().manual_seed(0))
on_axon = (x.to("axon").exp() * 2).sum().cpu()
torch.testing.assert_close(on_axon, (x.exp() * 2).sum())
print(f"wheel works: {torch.axon.get_device_name(0)}, fallbacks {torch.axon.fallback_ops()}")
PY
"$work/venv/bin/axon-smi" --json > "$work/smi.json"
"$work/venv/bin/python" -c "import json, sys; r = json.load(open(sys.argv[1])); assert r['devices'], r; print('axon-smi:', r['devices'][0]['name'])" "$work/smi.json"
echo "wheel check passed ($work)"
