"""Training of decoders: the core trainer shared by all decoder families.

The public names are importable from here (`from harness.training import train_decoder`);
they are loaded on first use, so importing `harness.training.options` needs no torch.
"""

from __future__ import annotations

from harness.lazy import lazy_exports

__getattr__, __all__ = lazy_exports(__name__, {
    "train_decoder": "trainer", "TrainingSummary": "run_state", "DivergedError": "run_state",
    "save_decoder": "checkpoint", "load_decoder_state": "checkpoint",
    "TrainingOptions": "options",
})
