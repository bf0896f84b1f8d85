"""Downstream evaluation of sentence encoders, SentEval-compatible (Conneau & Kiela 2018).

Layout of the package, one responsibility per module:

- `base`: the task protocol and the data/result types every task shares;
- `reading`: reading SentEval's text files with their quirks (encodings, BOM, CRLF);
- `loaders`: one loader per task family, reading `data/downstream` as SentEval's
  `get_transfer_data.bash` leaves it;
- `configs`: SentEval's "prototyping" and "literature" classifier settings;
- `classifier`, `evaluation`: the logistic-regression classifier and SentEval's validation
  schemes (nested k-fold, k-fold on train, dev-selected);
- `relatedness`, `sts`: SICK-R/STS-B (Tai et al. 2015) and STS12-16 (cosine);
- `tasks`: the registered task objects; `synthetic`: the quickstart's generated suite;
- `download`, `preprocess`, `expected`: `harness data senteval`.

Importing this package is cheap: numpy, torch and scikit-learn load inside the modules that
need them.
"""
