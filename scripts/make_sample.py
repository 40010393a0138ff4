"""Record the bundled sample trace: a Lightning fit of a ResNet-18 on the CPU.

    .venv/bin/python scripts/make_sample.py

Writes src/profsight/samples/resnet18_lightning_cpu.pt.trace.json.gz (the training-step
trace that Lightning's PyTorchProfiler exports), as the seed's tutorial sets it up:
a ResNet-18 feature extractor and a linear classifier, torchmetrics accuracy, the profiler
with record_module_names, record_shapes and profile_memory. Synthetic CIFAR-sized data.
"""

from __future__ import annotations

import gzip
import shutil
import sys
import tempfile
from pathlib import Path

import lightning as L
import torch
import torchmetrics
from lightning.pytorch.profilers import PyTorchProfiler

from profsight.demo.resnet import resnet18_backbone

OUT = (
    Path(__file__).resolve().parents[1]
    / "src/profsight/samples/resnet18_lightning_cpu.pt.trace.json.gz"
)


class Classifier(L.LightningModule):
    def __init__(self, num_classes: int = 10) -> None:
        super().__init__()
        self.feature_extractor = resnet18_backbone()
        self.classifier = torch.nn.Linear(512, num_classes)
        self.accuracy = torchmetrics.classification.MulticlassAccuracy(num_classes=num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.feature_extractor(x))

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], _: int) -> torch.Tensor:
        x, y = batch
        logits = self(x)
        loss = torch.nn.functional.cross_entropy(logits, y)
        self.accuracy(logits, y)
        self.log("train_acc", self.accuracy)
        return loss

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.Adam(self.parameters(), lr=1e-3)


def main() -> None:
    torch.manual_seed(0)
    data = torch.utils.data.TensorDataset(torch.randn(128, 3, 32, 32), torch.randint(0, 10, (128,)))
    loader = torch.utils.data.DataLoader(data, batch_size=16)
    with tempfile.TemporaryDirectory() as tmp:
        profiler = PyTorchProfiler(
            dirpath=tmp,
            filename="sample",
            export_to_chrome=True,
            record_module_names=True,
            record_shapes=True,
            profile_memory=True,
            schedule=torch.profiler.schedule(wait=1, warmup=1, active=3, repeat=1),
        )
        trainer = L.Trainer(
            max_epochs=1,
            limit_train_batches=6,
            limit_val_batches=0,
            profiler=profiler,
            logger=False,
            enable_checkpointing=False,
            enable_progress_bar=False,
            enable_model_summary=False,
            accelerator="cpu",
            devices=1,
        )
        trainer.fit(Classifier(), loader)
        traces = sorted(Path(tmp).glob("*training_step*.pt.trace.json"))
        if not traces:
            sys.exit("no trace was written")
        with open(traces[0], "rb") as src, gzip.open(OUT, "wb", compresslevel=9) as dst:
            shutil.copyfileobj(src, dst)
    print(f"wrote {OUT} ({OUT.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
