"""The conformance kit plugin authors call from their own tests (cf. scikit-learn's
`check_estimator`).

    from harness.testing import check_encoder, check_metric, check_registration

    import my_plugin

    def test_registration():
        check_registration(my_plugin)

    def test_encoder():
        check_encoder(my_plugin.MyEncoder(dim=32))

Each check raises `AssertionError` whose message says what is wrong and what to do, and returns
None (or what it checked) when the component behaves as the core expects. The checks test what
the core relies on: shapes and dtypes, determinism, independence from batching, for metrics the
additive statistics the core bootstraps, for decoders what training and search call, for tasks
what the downstream stage calls. They are explicit `raise`s, not `assert` statements, so they
also run under `python -O`.

One module per check: `encoders`, `metrics`, `decoders`, `tasks`, `defences`, `attacks`, `executors`,
`analyses`, `registration`; `check_executor` and `check_analysis` run a tiny real run (`runs`).
Importing the kit imports numpy; torch only when `check_decoder` runs.
"""

from __future__ import annotations

from harness.testing.analyses import check_analysis
from harness.testing.attacks import check_attack
from harness.testing.decoders import check_decoder
from harness.testing.defences import check_defence
from harness.testing.encoders import check_encoder
from harness.testing.executors import check_executor
from harness.testing.failures import DEFAULT_SENTENCES
from harness.testing.metrics import check_metric
from harness.testing.registration import check_registration
from harness.testing.tasks import check_task, hashed_bag_of_words

__all__ = [
    "DEFAULT_SENTENCES",
    "check_analysis",
    "check_attack",
    "check_decoder",
    "check_defence",
    "check_encoder",
    "check_executor",
    "check_metric",
    "check_registration",
    "check_task",
    "hashed_bag_of_words",
]
