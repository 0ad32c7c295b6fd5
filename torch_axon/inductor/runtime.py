"""What generated wrapper code calls: an OpenCL C kernel built once through the runtime's
program cache (memory and disk) and launched on the current stream."""

from __future__ import annotations

import hashlib
import os
import tempfile

from .. import _C


class AxonKernel:
    def __init__(self, name: str, signature: str, device: int, source: str) -> None:
        self.name = name
        self.signature = signature
        self.device = device
        self.source = source
        self._program: int | None = None

    def _build(self) -> int:
        try:
            return _C._build_program(self.device, self.source, "")
        except RuntimeError as error:
            path = self._save_failed_source(str(error))
            raise RuntimeError(
                f"axon: the generated kernel {self.name} failed to build; its OpenCL C source and the "
                f"build log are in {path}\n{error}"
            ) from error

    def _save_failed_source(self, log: str) -> str:
        digest = hashlib.sha1(self.source.encode()).hexdigest()[:12]
        folder = os.path.join(tempfile.gettempdir(), "axon_inductor_failures")
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, f"{self.name}_{digest}.cl")
        with open(path, "w") as f:
            f.write(self.source)
            f.write("\n/* build log:\n" + log.replace("*/", "* /") + "\n*/\n")
        return path

    def run(self, args: list, global_size: list[int]) -> None:
        if any(int(n) <= 0 for n in global_size):
            return
        if self._program is None:
            self._program = self._build()
        _C._launch(self._program, self.name, self.device, [int(n) for n in global_size], [], self.signature, args)
