"""Which Python frames are the user's own code, and which a library's or Python's.

torch strips every ``sys.path`` entry from a frame's file (``torch/profiler/python_tracer.py``:
``site-packages``, the script's directory and the rest), so a package of the user's project
and one installed beside torch read alike (``switch_transformers/model.py``,
``zeta/nn/modules/feedforward.py``): only the packages named here, Python's own and files
under ``site-packages`` are known as libraries; any other is counted as the user's.

``with_stack=True`` names a frame ``path(line): function``: the path relative to the
``sys.path`` entry it was found under (``torch/nn/modules/module.py``, ``threading.py``),
or absolute; ``<built-in method ...>``, ``<frozen importlib._bootstrap>`` and ``<string>``
for code without a file. A frame is a library's when its path is under ``site-packages`` or
``dist-packages``, when its first component is a package that ships as a library (the
training stack's, `LIBRARY_PACKAGES`) or a module of Python's standard library
(``sys.stdlib_module_names``), or when it has no file. Everything else is the user's.
"""

from __future__ import annotations

import re
import sys
from typing import Final

from profsight.lazy import regex

#: Packages that are libraries wherever they are installed (a checkout on ``sys.path``
#: included): the training stack and its usual companions.
LIBRARY_PACKAGES: Final = frozenset(
    {
        "torch",
        "torchvision",
        "torchaudio",
        "torchtext",
        "torchmetrics",
        "torchdata",
        "functorch",
        "lightning",
        "lightning_fabric",
        "lightning_utilities",
        "pytorch_lightning",
        "triton",
        "transformers",
        "accelerate",
        "datasets",
        "tokenizers",
        "huggingface_hub",
        "safetensors",
        "peft",
        "diffusers",
        "timm",
        "deepspeed",
        "apex",
        "megatron",
        "fairscale",
        "xformers",
        "flash_attn",
        "numpy",
        "scipy",
        "pandas",
        "PIL",
        "cv2",
        "sklearn",
        "tqdm",
        "wandb",
        "tensorboard",
        "mlflow",
        "hydra",
        "omegaconf",
        "einops",
        "jinja2",
        "yaml",
        "fsspec",
        "profsight",
        "typing_extensions",
        "_distutils_hack",
        "setuptools",
        "pkg_resources",
        "packaging",
        "six",
        "attr",
        "attrs",
        "filelock",
        "sympy",
        "networkx",
        "msgspec",
        "google",
        "grpc",
        "requests",
        "urllib3",
        "matplotlib",
        "h5py",
        "psutil",
        "loguru",
        "flashinfer",
        "aiter",
        "sgl_kernel",
        "liger_kernel",
        "_pytest",
        "pytest",
        "pluggy",
        "IPython",
        "ipykernel",
        "jupyter_client",
        "tornado",
        "zmq",
        "traitlets",
        "einx",
        "rich",
        "click",
        "typer",
        "absl",
        "jax",
        "flax",
        "optax",
        "keras",
        "tensorflow",
        "onnx",
        "onnxruntime",
        "vllm",
        "sglang",
        "bitsandbytes",
        "torchao",
        "torchtune",
        "torchrec",
        "fbgemm_gpu",
        "torch_xla",
    }
)
#: A frame's path and function: ``path(line): function``.
_FRAME = regex(r"^(?P<path>.+?)\((?P<line>\d+)\): (?P<function>.*)$")
_INSTALLED = regex(r"[\\/](?:site|dist)-packages[\\/]")
#: Code torch generates and runs from files of its own: Inductor's compiled graphs
#: (``/tmp/torchinductor_<user>/...``) and FX's (``<eval_with_key>``, caught as a pseudo-file).
_GENERATED = regex(r"[\\/]torchinductor_[^\\/]*[\\/]")
_ABSOLUTE = regex(r"^(?:[\\/]|[A-Za-z]:)")
#: Python's own library directory (``/usr/lib/python3.11/``, a conda env's ``lib/python3.12``).
_PYTHON_LIB = regex(r"[\\/]lib[\\/]python\d+(?:\.\d+)?[\\/]")
#: Standard-library modules, less the names a user's own script commonly takes.
_STDLIB: Final = frozenset(sys.stdlib_module_names) - {"test", "this", "antigravity"}

#: What the view by source line calls the time no frame of the user's own holds.
NO_USER_FRAME: Final = "(outside your code: no frame of yours above it)"
#: Source lines a report keeps: the user's functions with the most time.
SOURCE_LINE_ROWS: Final = 30
SOURCE_LINE_TEXT_ROWS: Final = 10
SOURCE_LINES_TITLE: Final = (
    "Time by source line (your functions, torch's, Lightning's and Python's frames folded in)"
)


def is_user_frame(name: str) -> bool:
    """Whether Python frame `name` (``path(line): function``) is the user's own code."""
    found = _FRAME.match(name)
    if found is None:
        return False  # a built-in, or no frame at all
    path = found.group("path")
    if path.startswith("<") or _INSTALLED.search(path) or _GENERATED.search(path):
        return False
    parts = [p for p in re.split(r"[\\/]", path) if p and p != "."]
    if not parts:
        return False
    if not _ABSOLUTE.match(path):  # relative to a sys.path entry: its top-level module
        head = parts[0].removesuffix(".py")
        return head not in LIBRARY_PACKAGES and head not in _STDLIB
    if _PYTHON_LIB.search(path):
        return False
    return not any(p in LIBRARY_PACKAGES for p in parts[:-1])


#: What the page says about its source-line section.
SOURCE_PAGE_TEXTS: Final[dict[str, str]] = {
    "intro": (
        "Your functions (as with_stack names them: file, first line, function), each holding "
        "the time of torch's, Lightning's and Python's frames it calls; the backward of an op "
        "is its forward line's. Total: the function and what it called; self: its own."
    ),
    "outside_label": "(outside your code)",
}
