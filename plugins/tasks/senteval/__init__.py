"""SentEval's task procedures (Conneau & Kiela 2018) over SentEval's `data/downstream` layout.

One responsibility per module:

- `reading`: reading SentEval's text files with their quirks (encodings, BOM, CRLF);
- `loaders`: one loader per file format, keyed by the task table's `reader`;
- `configs`: SentEval's "prototyping" and "literature" classifier settings;
- `classifier`, `evaluation`: the logistic-regression classifier and SentEval's validation
  schemes (nested k-fold, k-fold on train, dev-selected);
- `relatedness`, `sts`: SICK-R/STS-B (Tai et al. 2015) and STS12-16 (cosine);
- `tasks`: the task objects, one class per family, keyed by the task table's `procedure`.

Which tasks exist and how each is read and evaluated is the plugin's task table (`table`);
where their files lie and how many lines they hold is SentEval's data layout (`layout`),
which the downloader (`download`, `prepare`; `harness data senteval`) prepares.
Importing this package is cheap: numpy, torch and scikit-learn load with the modules that need
them.
"""
