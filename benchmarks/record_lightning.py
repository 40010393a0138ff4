"""Record a large Lightning ``PyTorchProfiler`` trace on the CPU: the seed's model (the demo's
ResNet-18 features, linear classifier and torchmetrics accuracy) trained by a ``Trainer``
for as many steps as the requested size needs.

    python benchmarks/record_lightning.py OUT.pt.trace.json [--size-mb 1000]

``record_shapes`` and ``profile_memory`` are on, as users turn them on; the images are
small (3x16x16, batch 2) so that a step is quick and the trace holds many of them. Lightning
writes the trace under a temporary folder; it is moved to OUT.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import sys
import tempfile
import warnings

import lightning as L
import torch
from lightning.pytorch.profilers import PyTorchProfiler

from profsight.demo.resnet import resnet18_backbone
from profsight.demo.training import NUM_CLASSES, DemoClassifier

#: exported bytes per profiled training step, measured once (used to size the run)
_BYTES_PER_STEP = 1_400_000
_SHAPE = (3, 16, 16)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--size-mb", type=float, default=1000.0)
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    torch.manual_seed(0)
    steps = int(args.size_mb * 1e6 / _BYTES_PER_STEP) + 1
    images = torch.randn(2 * (steps + 2), *_SHAPE)
    labels = torch.randint(0, NUM_CLASSES, (2 * (steps + 2),))
    loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(images, labels), batch_size=2
    )
    with tempfile.TemporaryDirectory() as tmp:
        profiler = PyTorchProfiler(
            dirpath=tmp,
            filename="large",
            export_to_chrome=True,
            record_shapes=True,
            profile_memory=True,
            schedule=torch.profiler.schedule(wait=0, warmup=1, active=steps, repeat=1),
        )
        trainer = L.Trainer(
            accelerator="cpu",
            devices=1,
            max_epochs=1,
            limit_train_batches=steps + 2,
            limit_val_batches=0,
            profiler=profiler,
            logger=False,
            enable_checkpointing=False,
            enable_progress_bar=False,
            enable_model_summary=False,
        )
        trainer.fit(DemoClassifier(resnet18_backbone()), loader)
        traces = sorted(glob.glob(os.path.join(tmp, "**", "*.pt.trace.json"), recursive=True))
        if not traces:
            print(f"no trace written under {tmp}", file=sys.stderr)
            return 1
        largest = max(traces, key=os.path.getsize)
        shutil.move(largest, args.out)
    size = os.path.getsize(args.out)
    print(f"{args.out}: {steps} steps, {size / 1e6:.0f} MB")
    return 0 if size >= args.size_mb * 1e6 * 0.9 else 1


if __name__ == "__main__":
    sys.exit(main())
