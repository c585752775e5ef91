"""pytorch-tabnet's own training entry point, `TabNetClassifier.fit`, with a tiny configuration
on a synthetic table. The library picks its device itself (`device_name="auto"`)."""

import numpy as np
from pytorch_tabnet.tab_model import TabNetClassifier

rng = np.random.default_rng(0)
X = rng.normal(size=(512, 8)).astype(np.float32)
y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(np.int64)
clf = TabNetClassifier(n_d=8, n_a=8, n_steps=2, seed=0, verbose=0, optimizer_params={"lr": 2e-2})
clf.fit(X, y, max_epochs=2, batch_size=64, virtual_batch_size=32, drop_last=True)
